// Public API: re-exports only; each concept lives in its layer's folder.
export { Level, levelName } from './schema/level.js';
export { FIELD_TYPES, type FieldType, type FieldSpec, type FieldValue } from './schema/field-type.js';
export { defineProvider, type Provider, type ProviderBase, type EventSpec, type EnableContext, type ProviderDefinition } from './schema/provider.js';
export type { TraceEventType, EventDescriptor, ArgsOf } from './schema/event-type.js';
export { startSession, liveSessions, TraceSession, SessionError, type SessionOptions, type SessionResult } from './session/session.js';
export type { SessionOutput } from './session/session-output.js';
export { parseProviderSpec, ProviderSpecError, type ProviderRequest, type ProviderConfig } from './session/provider-spec.js';
export { readTrace, type TraceReadable, type TraceSummary, type ThreadSummary, type ReadOptions, type ByteSource, type EventBatch, type PlacedDrop, type BatchOptions } from './format/trace-reader.js';
export type { TraceEvent, StreamEventType } from './format/trace-event.js';
export type { BlockEvent } from './format/events-block.js';
export type { TraceHeader } from './format/stream-header.js';
export type { DropRange } from './format/loss-tracker.js';
export { TraceFormatError, type TraceErrorCode } from './format/format-error.js';
export { monitorGCPauses, type GCPauseInfo, type GCPauseMonitorOptions, type GCPauseSeverity } from './api/gc-pause-monitor.js';
// Importing tracepipe defines the runtime providers, so a session that names them just works.
export { runtimeGC } from './providers/gc-provider.js';
export { runtimeEventLoop } from './providers/event-loop-provider.js';
export { runtimeGCHeap } from './providers/gc-heap-provider.js';
export { runtimeProcess } from './providers/process-provider.js';
export { nodeChannels } from './providers/channels-provider.js';
export { startDiagnosticServer, type DiagnosticServer } from './ipc/diagnostics-server.js';
export { processInfo, collectTracing, stopTracing, listTargets, TargetError, type TraceStream, type TargetListing } from './ipc/diagnostics-client.js';
export type { CollectRequest, ProcessInfo, SessionInfo, StopResult } from './ipc/ipc-commands.js';
export { TRACE_PROFILES, findProfile, type TraceProfile } from './session/trace-profiles.js';
