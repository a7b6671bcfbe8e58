// One variant of the gc-pause-cost benchmark, in its own process (needs --expose-gc): `off` (no
// session), `hook` (a Runtime.GC session with the GC hook) or `perf-hooks` (the same without it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from '../support/stats.mjs';
import { threadCpu } from '../support/thread-cpu.mjs';
import { reportResult } from '../support/variant-process.mjs';

const [variant, gcsArg, batchesArg] = process.argv.slice(2);
const GCS = Number(gcsArg);
const BATCHES = Number(batchesArg);
if (!['off', 'hook', 'perf-hooks'].includes(variant)) throw new Error(`unknown variant ${variant}`);
// Read when tracepipe loads: so set before the import.
if (variant === 'perf-hooks') process.env.TRACEPIPE_GC_HOOK = '0';
const { startSession } = await import('tracepipe');
const { gcHookLoaded } = await import('../../dist/providers/gc-hook.js');
if (variant === 'hook' && !gcHookLoaded) throw new Error('the GC hook is not built: npm run install');

const dir = mkdtempSync(join(tmpdir(), 'tracepipe-bench-gc-'));
const session = variant === 'off' ? undefined : await startSession({ providers: 'Runtime.GC', output: join(dir, 'gc.tptrace') });
const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Scavenges back to back, of a nearly empty young generation: mostly the fixed cost of a pause, so
 * what runs inside it (V8's callbacks, the hook's or perf_hooks') shows. The loop does not turn.
 */
function collect(n) {
  for (let i = 0; i < n; i++) gc({ type: 'minor' });
}

collect(GCS);
await turn();
const wall = [];
const cpu = [];
for (let b = 0; b < BATCHES; b++) {
  const c0 = threadCpu();
  const t0 = process.hrtime.bigint();
  collect(GCS);
  const t1 = process.hrtime.bigint();
  const c1 = threadCpu();
  wall.push(Number(t1 - t0) / GCS);
  if (c0 && c1) cpu.push((c1.runNs - c0.runNs) / GCS);
  // Between batches the loop turns: the pauses are written (hook) or delivered (perf_hooks), untimed.
  await turn();
  await turn();
}
const result = await session?.stop();
rmSync(dir, { recursive: true, force: true });
if (result && result.eventsDropped !== 0) throw new Error(`${result.eventsDropped} events dropped`);
reportResult({ variant, wallNs: median(wall), cpuNs: cpu.length ? median(cpu) : undefined, pausesWritten: result?.eventsWritten ?? 0 });
