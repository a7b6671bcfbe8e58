// Feeds a trace file to the live export's sink (src/sinks/otlp-sink.ts) as the drain thread would,
// in drain-sized writes, and ends the export. Run in a worker (bounded-worker.mjs): the sink's end
// waits on its sender thread with Atomics.wait, which must not block the receiver's thread.
import { readFileSync } from 'node:fs';
import { OtlpSink } from '../../dist/sinks/otlp-sink.js';

const WRITE_BYTES = 4096;

/** The sink's export counts once everything of `file` was posted to `endpoint`. */
export function replayThroughSink({ file, endpoint }) {
  const bytes = readFileSync(file);
  const sink = new OtlpSink({ endpoint });
  for (let at = 0; at < bytes.length; at += WRITE_BYTES) sink.write(bytes.subarray(at, at + WRITE_BYTES));
  const stats = sink.finishExport();
  sink.close();
  return stats;
}
