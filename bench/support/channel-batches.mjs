import { setTimeout as sleep } from 'node:timers/promises';
import { median } from './stats.mjs';
import { threadCpu } from './thread-cpu.mjs';

const WARMUP_BATCHES = 2;
/** A pause before each batch, so that the drain has emptied the last one and the loop has turned. */
const PAUSE_MS = 150;

/**
 * Times `publishOne(i)` (a request's channel messages, published as Node does) over `batches` batches
 * of `iters` after 2 warm-up batches: the medians of wall and on-CPU ns per request.
 */
export async function timeChannelBatches(publishOne, iters, batches) {
  const wall = [];
  const cpu = [];
  for (let b = 0; b < WARMUP_BATCHES + batches; b++) {
    await sleep(PAUSE_MS);
    const c0 = threadCpu();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < iters; i++) publishOne(i);
    const t1 = process.hrtime.bigint();
    const c1 = threadCpu();
    if (b < WARMUP_BATCHES) continue;
    wall.push(Number(t1 - t0) / iters);
    if (c0 && c1) cpu.push((c1.runNs - c0.runNs) / iters);
  }
  return { nsPerOp: median(wall), cpuNsPerOp: cpu.length ? median(cpu) : null };
}
