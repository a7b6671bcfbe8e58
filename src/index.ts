// Public API: re-exports only; each concept lives in its layer's folder.
export { Level, levelName } from './schema/level.js';
export { FIELD_TYPES, type FieldType, type FieldSpec, type FieldValue } from './schema/field-type.js';
export { defineProvider, type Provider, type ProviderBase, type EventSpec, type EnableContext, type ProviderDefinition } from './schema/provider.js';
export type { TraceEventType, EventDescriptor, ArgsOf } from './schema/event-type.js';
export type { SpanSpec, TraceSpanType } from './schema/span-type.js';
export type { CounterSpec, TraceCounterType } from './schema/counter-type.js';
export { typeRole, eventRole, type TypeRole } from './schema/type-role.js';
// The session functions through the thread's host: another copy of tracepipe may run the sessions.
export { startSession, liveSessions, startDiagnosticServer, type TracepipeHost } from './api/tracepipe-host.js';
export { TraceSession, SessionError, SessionLimitError, type SessionOptions, type SessionResult } from './session/session.js';
export type { OtlpOutput } from './session/otlp-output.js';
export type { SessionOutput } from './session/session-output.js';
export { parseProviderSpec, ProviderSpecError, type ProviderRequest, type ProviderConfig } from './session/provider-spec.js';
export { readTrace, type TraceReadable, type TraceSummary, type ThreadSummary, type ReadOptions, type ByteSource, type EventBatch, type PlacedDrop, type BatchOptions } from './format/trace-reader.js';
export type { TraceEvent, StreamEventType } from './format/trace-event.js';
export type { BlockEvent } from './format/events-block.js';
export type { TraceHeader } from './format/stream-header.js';
export type { DropRange } from './format/loss-tracker.js';
export { DROP_REASONS, type DropReason, type DropReasonCounts } from './format/drop-reason.js';
export { TraceFormatError, type TraceErrorCode } from './format/format-error.js';
export { startFlightRecorder, type FlightRecorder, type FlightRecorderOptions, type FlightDump } from './api/flight-recorder.js';
export type { DumpResult } from './session/drain-protocol.js';
export { monitorGCPauses, type GCPauseInfo, type GCPauseMonitorOptions, type GCPauseSeverity } from './api/gc-pause-monitor.js';
// Importing tracepipe defines the runtime providers, so a session that names them just works.
export { runtimeGC } from './providers/gc-provider.js';
export { runtimeEventLoop } from './providers/event-loop/event-loop-provider.js';
export { runtimeGCHeap } from './providers/gc-heap-provider.js';
export { runtimeCpuSampler } from './providers/cpu-sampler/cpu-sampler-provider.js';
export { runtimeProcess } from './providers/process-provider.js';
export { nodeChannels } from './providers/channels-provider.js';
export { runtimeCounters } from './providers/counters/runtime-counters-provider.js';
export { RUNTIME_COUNTERS, type RuntimeCounter, type CounterKind } from './providers/counters/runtime-counter-catalog.js';
export { runtimeHeapSnapshot } from './providers/heap-snapshot/heap-snapshot-provider.js';
export type { DiagnosticServer } from './ipc/diagnostics-server.js';
export { processInfo, collectTracing, stopTracing, listTargets, TargetError, type TraceStream, type TargetListing } from './ipc/diagnostics-client.js';
export type { CollectRequest, ProcessInfo, SessionInfo, StopResult } from './ipc/ipc-commands.js';
export { TRACE_PROFILES, findProfile, type TraceProfile } from './session/trace-profiles.js';
