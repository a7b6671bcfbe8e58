import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const VARIANT = fileURLToPath(new URL('./variant.mjs', import.meta.url));
/** What `tracepipe counters monitor` asks of its target (src/cli/counters/counters-command.ts), at 1 s. */
const COUNTERS_SPEC = 'Runtime.Counters:*:5:IntervalSec=1,Runtime.EventLoop:0x2:3';
const THROUGHPUT_ROUNDS = 7;
const THROUGHPUT_MS = 4000;
const IDLE_ROUNDS = 3;
const SETTLE_MS = 3000;
const WINDOW_MS = 20_000;
/** Idle CPU of a counters session above the same process without one (issue 26). */
const TARGET_IDLE_MS = 1;

export const description = 'issue 26: a busy target’s throughput with a Runtime.Counters session at 1 s vs none, and the idle CPU a counters session costs';

function env(dir, monitored) {
  const e = { ...process.env, TRACEPIPE_OUTPUT: join(dir, 'counters-{pid}.tptrace') };
  delete e.TRACEPIPE_ENABLE;
  delete e.TRACEPIPE_FLIGHT_RECORDER;
  if (monitored) Object.assign(e, { TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: COUNTERS_SPEC, TRACEPIPE_BUFFER_SIZE_MB: '4' });
  return e;
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-counters-bench-'));
  const nodeArgs = ['--import', 'tracepipe/register'];
  try {
    console.log(`throughput: ${THROUGHPUT_ROUNDS} rounds, variants interleaved, ${THROUGHPUT_MS / 1000} s of JSON round trips each (5 ms slices that yield); both load tracepipe/register`);
    const tp = await interleavedRounds(THROUGHPUT_ROUNDS, ['unmonitored', 'counters at 1 s'], (v) =>
      runVariant(VARIANT, ['throughput', String(THROUGHPUT_MS)], { nodeArgs, env: env(dir, v !== 'unmonitored') }).then((r) => r.opsPerSecond),
    );
    const base = summarize(tp.unmonitored);
    const mon = summarize(tp['counters at 1 s']);
    row('unmonitored', `${formatSummary(base, 0)} round trips/s`);
    row('counters at 1 s', `${formatSummary(mon, 0)} round trips/s`);
    const ratios = summarize(tp['counters at 1 s'].map((v, k) => v / tp.unmonitored[k]));
    // The noise: how far apart two runs of the same unmonitored process land.
    const noise = (base.max - base.min) / base.median;
    row('monitored / unmonitored', `${formatSummary(ratios, 3)} per round; unmonitored runs spread ${(100 * noise).toFixed(1)} %`);

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
      { check: 'throughput with counters at 1 s / unmonitored', value: `${ratios.median.toFixed(3)} (unmonitored runs spread ${(100 * noise).toFixed(1)} %)`, target: 'not measurable above noise', met: 1 - ratios.median <= Math.max(noise, 0.01) },
      { check: 'idle CPU of a counters session', value: `${extra.median.toFixed(2)} ms/s`, target: `<= ${TARGET_IDLE_MS} ms/s`, met: extra.median <= TARGET_IDLE_MS },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
