// Traces with CPU samples whose every figure a test knows in advance, written with TraceWriter (no
// session): Runtime.CpuSampler's own event types, as docs/FORMAT.md ("CPU samples") lays them out,
// frames and stacks defined by each writer before their first use, beside any other events.
import { runtimeCpuSampler } from '../../dist/index.js';
import { writeTrace } from './trace-builder.mjs';

/** The sampler's event types (docs/FORMAT.md, "CPU samples"). */
export const SAMPLER = runtimeCpuSampler;
const SAMPLER_TYPES = ['Frame', 'Stack', 'Sample', 'SamplerStarted', 'SamplerStopped', 'SamplesLost', 'SamplerRestarted'].map((name) => SAMPLER[name]);

/** A span type of a test provider (a `Request` span: begin and end). */
export const REQUEST = {
  Begin: { provider: 'Test.App', name: 'Request.Begin', id: 1, version: 0, level: 4, keywords: 1n, fields: [['spanId', 'u64'], ['parentSpanId', 'u64']] },
  End: { provider: 'Test.App', name: 'Request.End', id: 2, version: 0, level: 4, keywords: 1n, fields: [['spanId', 'u64'], ['error', 'bool'], ['errorName', 'string']] },
};

/** A function as V8 names it. */
export const frame = (functionName, url = '', line = 0, column = 0) => ({ functionName, url, line, column });

/**
 * Collects a trace's events in any order; `write` puts them in time order (definitions ahead of the
 * samples of the same time), numbers each thread's events and writes the file. Frames and stacks get
 * ids per writing thread, as the sampler gives them.
 */
export class CpuTraceBuilder {
  events = [];
  #order = 0;
  #ids = new Map();

  /** Any other event: `values` in the type's field order. */
  add(type, threadId, timestampNs, values) {
    this.events.push({ type, threadId, timestampNs: Math.round(timestampNs), values, order: this.#order++ });
  }

  started(thread, atNs, intervalUs, writer = thread) {
    this.add(SAMPLER.SamplerStarted, writer, atNs, [thread, intervalUs, 'test']);
  }

  /** The id of `stack` (frames outermost first) for `writer`, its frames and stacks defined at `atNs` on first use. */
  stackId(writer, stack, atNs) {
    let ids = this.#ids.get(writer);
    if (!ids) this.#ids.set(writer, (ids = { frames: new Map(), stacks: new Map(), next: 1 }));
    let parent = 0;
    for (let depth = 0; depth < stack.length; depth++) {
      const f = stack[depth];
      const fk = JSON.stringify(f);
      let frameId = ids.frames.get(fk);
      if (frameId === undefined) {
        ids.frames.set(fk, (frameId = ids.next++));
        this.add(SAMPLER.Frame, writer, atNs, [frameId, f.functionName, f.url, f.line, f.column]);
      }
      const sk = `${frameId}:${parent}`;
      let stackId = ids.stacks.get(sk);
      if (stackId === undefined) {
        ids.stacks.set(sk, (stackId = ids.next++));
        this.add(SAMPLER.Stack, writer, atNs, [stackId, frameId, parent]);
      }
      parent = stackId;
    }
    return parent;
  }

  /** Samples of `thread` running `stack` every intervalNs in [fromNs, toNs). */
  run(thread, stack, fromNs, toNs, intervalNs, writer = thread) {
    for (let t = fromNs; t < toNs; t += intervalNs) this.sample(thread, stack, t, writer);
  }

  sample(thread, stack, atNs, writer = thread) {
    this.add(SAMPLER.Sample, writer, atNs, [this.stackId(writer, stack, atNs), thread]);
  }

  /** A sample whose stack id the trace never defines. */
  unresolvedSample(thread, atNs, writer = thread) {
    this.add(SAMPLER.Sample, writer, atNs, [999_999, thread]);
  }

  async write(file, otherTypes = []) {
    const sorted = [...this.events].sort((a, b) => a.timestampNs - b.timestampNs || a.order - b.order);
    const seq = new Map();
    const events = sorted.map((e) => {
      const sequence = seq.get(e.threadId) ?? 0;
      seq.set(e.threadId, sequence + 1);
      return { type: e.type, threadId: e.threadId, sequence, timestampNs: e.timestampNs, values: e.values };
    });
    return writeTrace(file, [...SAMPLER_TYPES, ...otherTypes], events);
  }
}

const MS = 1e6;
const APP = 'file:///srv/app.js';
const WORKER = 'file:///srv/worker.js';
/** The functions of knownCpuTrace. */
export const F = {
  idle: frame('(idle)'),
  gc: frame('(garbage collector)'),
  main: frame('main', APP, 1, 1),
  busyLoop: frame('busyLoop', APP, 12, 3),
  handler: frame('handler', APP, 30, 5),
  stringify: frame('stringify', '', 0, 0),
  workerMain: frame('workerMain', WORKER, 1, 1),
  parse: frame('parse', WORKER, 5, 2),
  render: frame('render', WORKER, 9, 2),
  format: frame('format', WORKER, 20, 4),
};

/**
 * A second of two sampled threads at 1 ms, every figure known:
 * - main thread 0: idle 0–300 ms; a stall 300–600 ms (written by its watchdog, thread 2, with the
 *   samples of that time) in busyLoop ← main (290 samples), then the garbage collector (10); then
 *   stringify ← handler ← main 600–1000 ms (400); a Request span 600–610 ms on it.
 * - worker thread 1, sampled from 100 ms: parse ← workerMain 100–700 ms (600), format ← render ←
 *   render ← workerMain 700–900 ms (200), one sample at 900 ms whose stack is never defined, idle
 *   901–1000 ms (99); a Request span 650–850 ms on it.
 * - 7 samples of thread 1 lost ('buffer-full'), one sampler restart on thread 0.
 * Resolves with the builder (its events) once `file` is written.
 */
export async function knownCpuTrace(file, { runtimeEventLoop }) {
  const b = new CpuTraceBuilder();
  b.started(0, 0, 1000);
  b.started(1, 100 * MS, 1000);
  b.run(0, [F.idle], 0, 300 * MS, MS);
  b.run(0, [F.main, F.busyLoop], 300 * MS, 590 * MS, MS, 2);
  b.run(0, [F.gc], 590 * MS, 600 * MS, MS, 2);
  b.run(0, [F.main, F.handler, F.stringify], 600 * MS, 1000 * MS, MS);
  b.add(runtimeEventLoop.StallStart, 2, 400 * MS, [0, 100]);
  b.add(runtimeEventLoop.StallEnd, 2, 600 * MS, [0, 300]);
  b.run(1, [F.workerMain, F.parse], 100 * MS, 700 * MS, MS);
  b.run(1, [F.workerMain, F.render, F.render, F.format], 700 * MS, 900 * MS, MS);
  b.unresolvedSample(1, 900 * MS);
  b.run(1, [F.idle], 901 * MS, 1000 * MS, MS);
  b.add(REQUEST.Begin, 0, 600 * MS, [2n, 0n]);
  b.add(REQUEST.End, 0, 610 * MS, [2n, false, '']);
  b.add(REQUEST.Begin, 1, 650 * MS, [1n, 0n]);
  b.add(REQUEST.End, 1, 850 * MS, [1n, false, '']);
  b.add(SAMPLER.SamplesLost, 1, 950 * MS, [7, 1, 'buffer-full']);
  b.add(SAMPLER.SamplerRestarted, 0, 960 * MS, [0, 'stuck']);
  await b.write(file, [runtimeEventLoop.StallStart, runtimeEventLoop.StallEnd, REQUEST.Begin, REQUEST.End]);
  return b;
}
