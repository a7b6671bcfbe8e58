// The raw ring's consumer thread: writes every published segment to a file with fs.writeSync.
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { DATA_OFFSET, SEGMENT_BYTES, SEGMENTS, Word } from './ring-layout.mjs';

const { sab, path } = workerData;
const i32 = new Int32Array(sab);
const u8 = new Uint8Array(sab);
const fd = openSync(path, 'w');
let tail = 0;
let bytes = 0;
parentPort.postMessage({ type: 'running' });
for (;;) {
  const head = Atomics.load(i32, Word.Head);
  if (head === tail) {
    if (Atomics.load(i32, Word.Done) === 1 && Atomics.load(i32, Word.Head) === tail) break;
    Atomics.wait(i32, Word.Head, head, 100);
    continue;
  }
  for (; tail < head; tail++) {
    const k = tail % SEGMENTS;
    const len = i32[Word.Lengths + k];
    let off = 0;
    while (off < len) off += writeSync(fd, u8, DATA_OFFSET + k * SEGMENT_BYTES + off, len - off);
    bytes += len;
    Atomics.store(i32, Word.Tail, tail + 1);
    Atomics.notify(i32, Word.Tail);
  }
}
fsyncSync(fd);
closeSync(fd);
parentPort.postMessage({ type: 'done', bytes });
