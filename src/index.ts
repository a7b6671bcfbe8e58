// Public API: re-exports only; each concept lives in its layer's folder.
export { Level, levelName } from './schema/level.js';
export { FIELD_TYPES, type FieldType, type FieldSpec, type FieldValue } from './schema/field-type.js';
export { defineProvider, type Provider, type ProviderBase, type EventSpec, type EnableContext, type ProviderDefinition } from './schema/provider.js';
export type { TraceEventType, EventDescriptor, ArgsOf } from './schema/event-type.js';
export type { SpanSpec, TraceSpanType } from './schema/span-type.js';
export type { CounterSpec, TraceCounterType } from './schema/counter-type.js';
export { typeRole, eventRole, type TypeRole } from './schema/type-role.js';
// The session functions through the thread's host: another copy of tracepipe may run the sessions.
// Importing tracepipe loads none of the machinery behind them: it loads on first use (src/machinery.ts).
export { startSession, liveSessions, startDiagnosticServer, type TracepipeHost } from './api/tracepipe-host.js';
export type { SessionOptions, SessionResult } from './session/session.js';
export { SessionError, SessionLimitError } from './session/session-error.js';
export type { OtlpOutput } from './session/otlp-output.js';
export type { SessionOutput } from './session/session-output.js';
export { parseProviderSpec, ProviderSpecError, type ProviderRequest, type ProviderConfig } from './session/provider-spec.js';
export { readTrace, startFlightRecorder, processInfo, collectTracing, stopTracing, listTargets, TraceSession } from './api/on-first-use.js';
export type { TraceReadable, TraceSummary, ThreadSummary, ReadOptions, ByteSource, EventBatch, PlacedDrop, BatchOptions } from './format/trace-reader.js';
export type { TraceEvent, StreamEventType } from './format/trace-event.js';
export type { BlockEvent } from './format/events-block.js';
export type { TraceHeader } from './format/stream-header.js';
export type { DropRange } from './format/loss-tracker.js';
export { DROP_REASONS, type DropReason, type DropReasonCounts } from './format/drop-reason.js';
export { TraceFormatError, type TraceErrorCode } from './format/format-error.js';
export type { FlightRecorder, FlightRecorderOptions, FlightDump } from './api/flight-recorder.js';
export type { DumpResult } from './session/drain-protocol.js';
export { monitorGCPauses, type GCPauseInfo, type GCPauseMonitorOptions, type GCPauseSeverity } from './api/gc-pause-monitor.js';
// Importing tracepipe defines the runtime providers, so a session that names them just works.
export { runtimeGC, runtimeEventLoop, runtimeGCHeap, runtimeCpuSampler, runtimeProcess, nodeChannels, runtimeCounters, runtimeHeapSnapshot } from './providers/runtime-providers.js';
export { RUNTIME_COUNTERS, type RuntimeCounter, type CounterKind } from './providers/counters/runtime-counter-catalog.js';
export type { DiagnosticServer } from './ipc/diagnostics-server.js';
export { TargetError } from './ipc/target-error.js';
export type { TraceStream, TargetListing } from './ipc/diagnostics-client.js';
export type { CollectRequest, ProcessInfo, SessionInfo, StopResult } from './ipc/ipc-commands.js';
export { TRACE_PROFILES, findProfile, type TraceProfile } from './session/trace-profiles.js';
// A worker thread joins the process's sessions (loading them when one runs).
import './api/worker-join.js';
