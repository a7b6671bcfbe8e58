import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { runVariant } from '../support/variant-process.mjs';

const VARIANT = fileURLToPath(new URL('./variant.mjs', import.meta.url));
const ROUNDS = 3;
const SETTLE_MS = 3000;
const WINDOW_MS = 30_000;
/** Targets above untraced, ms of CPU per second (issue 14). */
const TARGET_REGISTER = 0.2;
const TARGET_SESSION = 3;

export const description =
  'issue 14: CPU of an idle process (all threads, 3 s to 33 s after start, and 33 s to 63 s): untraced, diagnostics server only, a startup session of the default profile, a flight recorder';

// Every traced variant includes V8's memory reducer: 8 s or more after a start that grew the old
// generation by 1 MB (loading tracepipe does, as does any application's code), V8 runs two
// mark-compacts, ~20-30 ms of CPU once (see `--trace-gc`). The untraced process loads nothing, so
// the difference carries that one-off cost; BENCHMARKS.md says how much of each figure it is.

/** The traced variants for one build of tracepipe (`register` is its tracepipe/register). */
function tracedVariants(register, suffix) {
  const nodeArgs = ['--import', register];
  return {
    [`register only${suffix}`]: { nodeArgs, env: {}, target: TARGET_REGISTER },
    [`default-profile session${suffix}`]: { nodeArgs, env: { TRACEPIPE_ENABLE: '1' }, target: TARGET_SESSION },
    [`flight recorder 16 MB${suffix}`]: { nodeArgs, env: { TRACEPIPE_FLIGHT_RECORDER: '16' }, target: TARGET_SESSION },
  };
}

/**
 * TRACEPIPE_BENCH_BEFORE=<checkout with a built dist/> adds the same traced variants run with that
 * build, so a change's before and after are measured side by side in one run.
 */
function variantsToRun() {
  const variants = { untraced: { nodeArgs: [], env: {} }, ...tracedVariants('tracepipe/register', '') };
  const before = process.env.TRACEPIPE_BENCH_BEFORE;
  if (before) Object.assign(variants, tracedVariants(pathToFileURL(resolve(before, 'dist/register.js')).href, ' (before)'));
  return variants;
}

/** Runs every variant of a round at once: idle processes barely compete, and a round takes one window. */
function runRound(variants, dir) {
  return Promise.all(
    Object.values(variants).map(({ nodeArgs, env }) => {
      const childEnv = { ...process.env, TRACEPIPE_OUTPUT: join(dir, 'idle-{pid}.tptrace'), TRACEPIPE_FLIGHT_DIR: dir, ...env };
      for (const k of ['TRACEPIPE_ENABLE', 'TRACEPIPE_FLIGHT_RECORDER']) if (!(k in env)) delete childEnv[k];
      return runVariant(VARIANT, [String(SETTLE_MS), String(WINDOW_MS)], { nodeArgs, env: childEnv, timeoutMs: SETTLE_MS + 2 * WINDOW_MS + 30_000 });
    }),
  );
}

export async function run() {
  const variants = variantsToRun();
  const names = Object.keys(variants);
  console.log(
    `${ROUNDS} rounds; in each, ${names.length} idle processes run side by side: CPU ms per second of all their threads from ${SETTLE_MS / 1000} s to ${(SETTLE_MS + WINDOW_MS) / 1000} s after start (the target's window), and from then to ${(SETTLE_MS + 2 * WINDOW_MS) / 1000} s ("later": start-up's one-off costs behind it)`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-idle-'));
  const res = Object.fromEntries(names.map((n) => [n, []]));
  const later = Object.fromEntries(names.map((n) => [n, []]));
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const results = await runRound(variants, dir);
      names.forEach((n, k) => {
        res[n].push(results[k].cpuMsPerSecond);
        later[n].push(results[k].laterCpuMsPerSecond);
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const checks = [];
  for (const n of names) {
    if (n === 'untraced') {
      row(n, `${formatSummary(summarize(res[n]), 2)} ms/s; later ${formatSummary(summarize(later[n]), 2)}`);
      continue;
    }
    // Per round: the variant minus the untraced process that ran beside it.
    const extra = summarize(res[n].map((v, k) => v - res.untraced[k]));
    const laterExtra = summarize(later[n].map((v, k) => v - later.untraced[k]));
    row(n, `${formatSummary(summarize(res[n]), 2)} ms/s; above untraced ${formatSummary(extra, 2)}; later ${formatSummary(laterExtra, 2)}`);
    const { target } = variants[n];
    checks.push({ check: `idle CPU above untraced, ${n}`, value: `${extra.median.toFixed(2)} ms/s`, target: `<= ${target} ms/s`, met: n.endsWith('(before)') ? null : extra.median <= target });
  }
  return checks;
}
