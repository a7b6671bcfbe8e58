// One variant of the counters benchmark, in its own process (with `--import tracepipe/register`, and
// a startup session of Runtime.Counters when the environment asks for one):
//   throughput <ms>        JSON round trips in 5 ms slices that yield to the loop; reports per second
//   idle <settle> <window> does nothing; reports the CPU of all its threads per second over the window
import { reportResult } from '../support/variant-process.mjs';

const [mode, a, b] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

if (mode === 'throughput') {
  const windowMs = Number(a);
  await sleep(1000);
  const doc = { id: 1, name: 'order', items: Array.from({ length: 20 }, (_, i) => ({ sku: `sku-${i}`, qty: i, price: i * 1.5 })) };
  let ops = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < windowMs) {
    const slice = performance.now() + 5;
    while (performance.now() < slice) {
      JSON.parse(JSON.stringify(doc));
      ops++;
    }
    await new Promise((r) => setImmediate(r));
  }
  reportResult({ opsPerSecond: ops / ((performance.now() - t0) / 1000) });
} else {
  await sleep(Number(a) - performance.now());
  const u = process.cpuUsage();
  const t0 = performance.now();
  await sleep(Number(b));
  const d = process.cpuUsage(u);
  reportResult({ cpuMsPerSecond: (d.user + d.system) / 1000 / ((performance.now() - t0) / 1000) });
}
