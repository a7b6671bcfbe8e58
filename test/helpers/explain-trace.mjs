// Traces for the explain tests, written event by event (no session) so that every share is known in
// advance: spans of a test provider, GC pauses, stalls written by the watchdog, CPU samples.
import { join } from 'node:path';
import { defineProvider, runtimeCpuSampler, runtimeEventLoop, runtimeGC } from '../../dist/index.js';
import { tempDir } from './temp-dir.mjs';
import { writeTrace } from './trace-builder.mjs';

export const app = defineProvider('Test.App', { spans: { Req: { id: 1, fields: [['route', 'string']] }, Query: { id: 2, fields: [['sql', 'string']] } } });
export const { Frame, Stack, Sample, SamplerStarted } = runtimeCpuSampler;
const TYPES = [app.Req.beginType, app.Req.endType, app.Query.beginType, app.Query.endType, runtimeGC.GCPause, runtimeEventLoop.StallStart, runtimeEventLoop.StallEnd, Frame, Stack, Sample, SamplerStarted];
export const MS = 1e6;
const WATCHDOG = 2;

/** Events as { type, threadId, timestampNs, values }: put in time order, numbered per thread, written. */
export async function trace(t, events) {
  const file = join(await tempDir(t), 'explain.tptrace');
  const seq = new Map();
  const ordered = events
    .map((e, i) => ({ ...e, i }))
    .sort((a, b) => a.timestampNs - b.timestampNs || a.i - b.i)
    .map((e) => {
      const sequence = seq.get(e.threadId) ?? 0;
      seq.set(e.threadId, sequence + 1);
      return { ...e, sequence };
    });
  await writeTrace(file, TYPES, ordered);
  return file;
}

export const at = (ms) => Math.round(ms * MS);
export const begin = (span, id, parent, ms, label, threadId = 0) => ({ type: span.beginType, threadId, timestampNs: at(ms), values: [BigInt(id), BigInt(parent), label] });
export const end = (span, id, ms, threadId = 0) => ({ type: span.endType, threadId, timestampNs: at(ms), values: [BigInt(id), false, ''] });
export const gcPause = (ms, durationMs, kind, thread = 0) => ({ type: runtimeGC.GCPause, threadId: thread, timestampNs: at(ms), values: [BigInt(at(durationMs)), kind, 0, 0, thread, 0] });
/** A stall of the main thread written by its watchdog: it began at startMs and lasted durationMs. */
export const stall = (startMs, durationMs) => [
  { type: runtimeEventLoop.StallStart, threadId: WATCHDOG, timestampNs: at(startMs + 100), values: [0, 100] },
  { type: runtimeEventLoop.StallEnd, threadId: WATCHDOG, timestampNs: at(startMs + durationMs), values: [0, durationMs] },
];
/** Frames 1 work (app.js:3), 2 handle (app.js:10), 3 (idle); stacks 1 handle, 2 work ← handle, 3 (idle). */
export const definitions = (ms, writer = 0) => [
  { type: Frame, threadId: writer, timestampNs: at(ms), values: [1, 'work', 'file:///srv/app.js', 3, 1] },
  { type: Frame, threadId: writer, timestampNs: at(ms), values: [2, 'handle', 'file:///srv/app.js', 10, 1] },
  { type: Frame, threadId: writer, timestampNs: at(ms), values: [3, '(idle)', '', 0, 0] },
  { type: Stack, threadId: writer, timestampNs: at(ms), values: [1, 2, 0] },
  { type: Stack, threadId: writer, timestampNs: at(ms), values: [2, 1, 1] },
  { type: Stack, threadId: writer, timestampNs: at(ms), values: [3, 3, 0] },
];
export const sample = (ms, stack, thread = 0, writer = thread) => ({ type: Sample, threadId: writer, timestampNs: at(ms), values: [stack, thread] });
