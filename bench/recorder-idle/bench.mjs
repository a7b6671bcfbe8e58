import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const VARIANT = fileURLToPath(new URL('./variant.mjs', import.meta.url));
const ROUNDS = 3;
const SETTLE_MS = 3000;
const WINDOW_MS = 10_000;

export const description = 'issue 13: CPU of an idle process with an always-on flight recorder (16 MB ring, default providers) vs the same process untraced';

const variants = {
  untraced: { nodeArgs: [], env: {} },
  'register only': { nodeArgs: ['--import', 'tracepipe/register'], env: {} },
  'flight recorder': { nodeArgs: ['--import', 'tracepipe/register'], env: { TRACEPIPE_FLIGHT_RECORDER: '16' } },
};

export async function run() {
  console.log(`${ROUNDS} rounds x ${Object.keys(variants).length} variants, each an idle process: CPU ms per second of all its threads from ${SETTLE_MS / 1000} s to ${(SETTLE_MS + WINDOW_MS) / 1000} s after start`);
  const res = await interleavedRounds(ROUNDS, Object.keys(variants), (v) => {
    const { nodeArgs, env } = variants[v];
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      return runVariant(VARIANT, [String(SETTLE_MS), String(WINDOW_MS)], { nodeArgs, timeoutMs: 60_000 });
    } finally {
      for (const k of Object.keys(env)) if (saved[k] === undefined) delete process.env[k];
    }
  });
  const cpu = (v) => summarize(res[v].map((r) => r.cpuMsPerSecond));
  for (const v of Object.keys(variants)) row(v, `${formatSummary(cpu(v), 2)} ms CPU per second`);
  const extra = summarize(res['flight recorder'].map((r, k) => r.cpuMsPerSecond - res.untraced[k].cpuMsPerSecond));
  row('flight recorder - untraced', `${formatSummary(extra, 2)} ms CPU per second`);
  return [{ check: 'idle CPU of an always-on flight recorder (default providers), above untraced', value: `${extra.median.toFixed(2)} ms/s`, target: '', met: null }];
}
