import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const VARIANT = fileURLToPath(new URL('./variant.mjs', import.meta.url));
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const THROUGHPUT_ROUNDS = 7;
const THROUGHPUT_MS = 4000;
const IDLE_ROUNDS = 3;
/** Past the one-off costs of a session's start: V8's memory reducer collects the main isolate 8 s or more after the machinery loads (~20-28 s here). */
const SETTLE_MS = 40_000;
const WINDOW_MS = 20_000;
/** Idle CPU of a counters session above the same process without one (issue 26). */
const TARGET_IDLE_MS = 1;

export const description = 'issue 26: a busy target’s throughput with a Runtime.Counters session at 1 s vs none, and the idle CPU a counters session costs';

let runs = 0;
/** The monitored variant runs `tracepipe counters collect --pid` against itself (bench/counters/variant.mjs). */
function env(dir, monitored) {
  const e = { ...process.env };
  for (const k of ['TRACEPIPE_ENABLE', 'TRACEPIPE_FLIGHT_RECORDER', 'COUNTERS_CLI']) delete e[k];
  if (monitored) Object.assign(e, { COUNTERS_CLI: CLI, COUNTERS_OUT: join(dir, `counters-${runs++}.csv`) });
  return e;
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-counters-bench-'));
  const nodeArgs = ['--import', 'tracepipe/register'];
  try {
    console.log(`throughput: ${THROUGHPUT_ROUNDS} rounds, variants interleaved, ${THROUGHPUT_MS / 1000} s of JSON round trips each (5 ms slices that yield); both load tracepipe/register, the monitored one runs \`tracepipe counters collect --pid\` against itself (a session streaming Runtime.Counters at 1 s)`);
    const tp = await interleavedRounds(THROUGHPUT_ROUNDS, ['unmonitored', 'counters at 1 s'], (v) => runVariant(VARIANT, ['throughput', String(THROUGHPUT_MS)], { nodeArgs, env: env(dir, v !== 'unmonitored') }));
    const ratioOf = (key) => {
      const base = summarize(tp.unmonitored.map((r) => r[key]));
      const mon = summarize(tp['counters at 1 s'].map((r) => r[key]));
      const ratios = summarize(tp['counters at 1 s'].map((r, k) => r[key] / tp.unmonitored[k][key]));
      // The noise: how far apart two runs of the same unmonitored process land.
      return { base, mon, ratios, noise: (base.max - base.min) / base.median };
    };
    const wall = ratioOf('opsPerSecond');
    const cpu = ratioOf('opsPerCpuSecond');
    row('unmonitored', `${formatSummary(wall.base, 0)} round trips/s; ${formatSummary(cpu.base, 0)} per CPU second`);
    row('counters at 1 s', `${formatSummary(wall.mon, 0)} round trips/s; ${formatSummary(cpu.mon, 0)} per CPU second`);
    row('monitored / unmonitored', `wall ${formatSummary(wall.ratios, 3)}, unmonitored runs spread ${(100 * wall.noise).toFixed(1)} %; per CPU second ${formatSummary(cpu.ratios, 3)}, spread ${(100 * cpu.noise).toFixed(1)} %`);

    console.log(`idle: ${IDLE_ROUNDS} rounds, both variants side by side, CPU of all threads per second from ${SETTLE_MS / 1000} s to ${(SETTLE_MS + WINDOW_MS) / 1000} s after start`);
    const idle = { unmonitored: [], 'counters at 1 s': [] };
    for (let r = 0; r < IDLE_ROUNDS; r++) {
      const [u, m] = await Promise.all([false, true].map((monitored) => runVariant(VARIANT, ['idle', String(SETTLE_MS), String(WINDOW_MS)], { nodeArgs, env: env(dir, monitored), timeoutMs: SETTLE_MS + WINDOW_MS + 30_000 })));
      idle.unmonitored.push(u.cpuMsPerSecond);
      idle['counters at 1 s'].push(m.cpuMsPerSecond);
    }
    const extra = summarize(idle['counters at 1 s'].map((v, k) => v - idle.unmonitored[k]));
    row('idle, unmonitored', `${formatSummary(summarize(idle.unmonitored), 2)} ms CPU/s`);
    row('idle, counters at 1 s', `${formatSummary(summarize(idle['counters at 1 s']), 2)} ms CPU/s; above unmonitored ${formatSummary(extra, 2)}`);
    return [
      { check: 'round trips per CPU second with counters at 1 s / unmonitored', value: `${cpu.ratios.median.toFixed(3)} (unmonitored runs spread ${(100 * cpu.noise).toFixed(1)} %)`, target: 'not measurable above noise', met: 1 - cpu.ratios.median <= Math.max(cpu.noise, 0.01) },
      { check: 'round trips per second with counters at 1 s / unmonitored', value: `${wall.ratios.median.toFixed(3)} (unmonitored runs spread ${(100 * wall.noise).toFixed(1)} %)`, target: 'not measurable above noise', met: 1 - wall.ratios.median <= Math.max(wall.noise, 0.01) },
      { check: 'idle CPU of a counters session', value: `${extra.median.toFixed(2)} ms/s`, target: `<= ${TARGET_IDLE_MS} ms/s`, met: extra.median <= TARGET_IDLE_MS },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
