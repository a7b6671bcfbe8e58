/** Worker entry for a session's drain: wire shared memory, sink and loop, report the result, exit. */
import { parentPort, workerData } from 'node:worker_threads';
import { SessionMemory } from '../buffers/session-memory.js';
import { threadOriginNs } from '../buffers/clock.js';
import { DrainLoop } from '../drain/drain-loop.js';
import { runRing } from '../drain/ring-loop.js';
import type { Sink } from '../drain/sink.js';
import { FdSink } from '../sinks/fd-sink.js';
import { FileSink } from '../sinks/file-sink.js';
import { NonBlockingFdSink } from '../sinks/non-blocking-fd-sink.js';
import { PortSink } from '../sinks/port-sink.js';
import { OtlpSink } from '../sinks/otlp-sink.js';
import { TeeSink } from '../sinks/tee-sink.js';
import type { DumpTarget, OtlpSinkSpec, SinkSpec } from '../session/drain-protocol.js';
import type { DrainSettings } from '../session/drain-thread.js';


const port = parentPort!;
// A thread started ahead of its session (session/drain-thread.ts) has its settings as its first message.
const data = (workerData ?? (await new Promise((resolve) => port.once('message', resolve)))) as DrainSettings;
const memory = SessionMemory.attach(data.sab);
const clockDeltaNs = Number(threadOriginNs() - BigInt(data.originNs));
const byteSinkFor = (spec: Exclude<SinkSpec, { kind: 'ring' | 'none' }>): Sink =>
  spec.kind === 'file' ? new FileSink(spec.path, spec.newFile) : spec.kind === 'fd' ? new FdSink(spec.fd, spec.prologue) : new PortSink(port, memory);
function sinkFor(spec: Exclude<SinkSpec, { kind: 'ring' }>, otlp: OtlpSinkSpec | undefined): Sink {
  if (spec.kind === 'none') return new OtlpSink(otlp!);
  const bytes = byteSinkFor(spec);
  return otlp ? new TeeSink(bytes, new OtlpSink(otlp)) : bytes;
}
/** A ring's dumps: a client's never makes the drain wait for it (its other dumps go on meanwhile). */
const dumpSinkFor = (t: DumpTarget): Sink => (t.kind === 'file' ? new FileSink(t.path, t.newFile) : new NonBlockingFdSink(t.fd, t.prologue));

if (data.sink.kind === 'ring') {
  memory.prefault();
  port.postMessage({ type: 'running' });
  port.postMessage({ type: 'done', result: runRing(memory, port, data.header, clockDeltaNs, dumpSinkFor) });
} else {
  let loop: DrainLoop | undefined;
  try {
    loop = new DrainLoop(memory, sinkFor(data.sink, data.otlp), data.header, clockDeltaNs);
  } catch (e) {
    port.postMessage({ type: 'failed', error: (e as Error).message });
  }
  if (loop) {
    memory.prefault();
    port.postMessage({ type: 'running' });
    const result = loop.run();
    port.postMessage({ type: 'done', result });
  }
}
