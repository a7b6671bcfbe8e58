import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { row } from '../support/report.mjs';
import { formatSummary, median, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const VARIANT = fileURLToPath(new URL('./variant.mjs', import.meta.url));
const EMPTY_MODULE = fileURLToPath(new URL('../../test/helpers/empty-import.mjs', import.meta.url));
const IMPORT_ROUNDS = 21;
const SESSION_ROUNDS = 11;
const PROCESS_ROUNDS = 31;
const REGISTER_ROUNDS = 61;
const TIME = '/usr/bin/time';
/** Targets of issue 24. */
const TARGET_IMPORT_MS = 15;
const TARGET_IMPORT_VS_PINO = 1.5;
const TARGET_REGISTER_MS = 5;
const TARGET_FIRST_EVENT_MS = 15;
const TARGET_SESSION_WALL_MS = 40;
const TARGET_SESSION_RSS_MB = 15;

export const description =
  "issue 24: import time of tracepipe, tracepipe/lite and pino; startSession to first recorded event, to resolve, stop(); `node -e 0` untraced, with --import and --require tracepipe/register, a startup session (TRACEPIPE_ENABLE=1) and a flight recorder: wall, CPU, peak RSS";

/**
 * `node -e 0` under /usr/bin/time: CPU ms and peak RSS in MB from it, wall ms timed here (time's own
 * wall has 10 ms steps, as coarse as the 5 ms target it checks; starting time itself is the same
 * for every variant).
 */
async function timedProcess(nodeArgs, env, dir) {
  const out = join(dir, 'time.txt');
  const t0 = process.hrtime.bigint();
  await promisify(execFile)(TIME, ['-o', out, '-f', '%U %S %M', process.execPath, ...nodeArgs, '-e', '0'], { env, timeout: 60_000 });
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const [user, sys, maxKb] = readFileSync(out, 'utf8').trim().split('\n').pop().split(' ').map(Number);
  return { wallMs, cpuMs: (user + sys) * 1000, rssMB: maxKb / 1024 };
}

/**
 * `node -e 0` with each of `variants` (their node arguments and environment), `rounds` processes
 * each, interleaved, printed as a table; `over(a, b, k)` is the median of per-round differences of
 * figure `k` (wall by default) between variants a and b (`node -e 0` by default).
 */
async function processTable(rounds, variants, dir) {
  const names = Object.keys(variants);
  const procs = await interleavedRounds(rounds, names, (n) => timedProcess(variants[n].nodeArgs, childEnv(variants[n].env), dir));
  const over = (a, b = 'node -e 0', k = 'wallMs') => median(procs[a].map((p, i) => p[k] - procs[b][i][k]));
  console.log(`\`node -e 0\`, ${rounds} processes each, interleaved (wall timed by the bench; ${TIME}: user + system CPU, peak RSS; "+" is the median of per-round differences with the untraced process):`);
  for (const n of names) {
    const m = (k) => median(procs[n].map((p) => p[k]));
    const plus = n === 'node -e 0' ? '' : ` (+${over(n).toFixed(1)} ms, +${over(n, 'node -e 0', 'cpuMs').toFixed(0)} ms, +${over(n, 'node -e 0', 'rssMB').toFixed(1)} MB)`;
    row(n, `wall ${m('wallMs').toFixed(0)} ms, CPU ${m('cpuMs').toFixed(0)} ms, peak RSS ${m('rssMB').toFixed(1)} MB${plus}`);
  }
  return { over };
}

function childEnv(extra) {
  const env = { ...process.env, ...extra };
  for (const k of Object.keys(env)) if (k.startsWith('TRACEPIPE_') && !(k in extra)) delete env[k];
  return env;
}

/**
 * TRACEPIPE_BENCH_BEFORE=<checkout with a built dist/> adds that build's import and register, run in
 * the same rounds, so a change's before and after are measured side by side.
 */
const BEFORE = process.env.TRACEPIPE_BENCH_BEFORE;
const beforeFile = (f) => pathToFileURL(resolve(BEFORE, 'dist', f)).href;
/** This build's file, for the side-by-side ratio: a package specifier costs its resolution (~1.5 ms, the package's exports) that a file URL does not. */
const thisFile = (f) => new URL(`../../dist/${f}`, import.meta.url).href;

export async function run() {
  const checks = [];
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-startup-'));
  try {
    // Import: each specifier first thing in a fresh process, rounds interleaved.
    const specs = ['tracepipe', 'tracepipe/lite', 'pino', ...(BEFORE ? [beforeFile('index.js'), thisFile('index.js')] : [])];
    const imports = await interleavedRounds(IMPORT_ROUNDS, specs, async (s) => (await runVariant(VARIANT, ['import', s])).ms);
    console.log(`import, ${IMPORT_ROUNDS} fresh processes each, interleaved (ms from the call to its resolve):`);
    const label = (s) => (s === specs[3] ? 'its dist/index.js, the build before' : s === specs[4] ? 'its dist/index.js, this build' : `import '${s}'`);
    for (const s of specs) row(label(s), `${formatSummary(summarize(imports[s]), 1)} ms`);
    if (BEFORE) row('dist/index.js, this build / before', `${median(imports[specs[4]].map((v, k) => v / imports[specs[3]][k])).toFixed(2)}× (median of per-round ratios)`);
    // Per round, the ratio of processes that ran side by side.
    const vsPino = median(imports.tracepipe.map((v, k) => v / imports.pino[k]));
    const vsLite = median(imports.tracepipe.map((v, k) => v / imports['tracepipe/lite'][k]));
    row("import 'tracepipe' / import 'pino'", `${vsPino.toFixed(2)}× (median of per-round ratios); / tracepipe/lite ${vsLite.toFixed(1)}×`);
    const importMs = median(imports.tracepipe);
    checks.push({ check: "import 'tracepipe'", value: `${importMs.toFixed(1)} ms`, target: `<= ${TARGET_IMPORT_MS} ms`, met: importMs <= TARGET_IMPORT_MS });
    checks.push({ check: "import 'tracepipe' / import 'pino'", value: `${vsPino.toFixed(2)}×`, target: `<= ${TARGET_IMPORT_VS_PINO}×`, met: vsPino <= TARGET_IMPORT_VS_PINO });

    // A session started by the program: to its first recorded event, to resolve, and its stop (and the
    // same with the build before, in the same rounds).
    // Beside the build before, each build's file by URL: the package specifier made this build's first event 1.15-1.25× later than by its URL.
    const entries = BEFORE ? { after: thisFile('index.js'), before: beforeFile('index.js') } : { after: 'tracepipe' };
    let round = 0;
    const timed = await interleavedRounds(SESSION_ROUNDS, Object.keys(entries), (k) => runVariant(VARIANT, ['session', join(dir, `s${round++}.tptrace`), entries[k]]));
    const sessions = timed.after;
    console.log(`startSession({ providers: 'Runtime.GC,…', output: file }) after import 'tracepipe', ${SESSION_ROUNDS} processes${BEFORE ? ' each, interleaved with the build before' : ''}:`);
    for (const [k, label] of [['firstEventMs', 'call to first recorded event'], ['resolveMs', 'call to resolve'], ['stopMs', 'stop()']]) {
      row(label, `${formatSummary(summarize(sessions.map((s) => s[k])), 1)} ms`);
      if (BEFORE) {
        row(`${label}, before`, `${formatSummary(summarize(timed.before.map((s) => s[k])), 1)} ms`);
        row(`${label} / before`, `${median(sessions.map((s, i) => s[k] / timed.before[i][k])).toFixed(2)}× (median of per-round ratios)`);
      }
    }
    const firstMs = median(sessions.map((s) => s.firstEventMs));
    checks.push({ check: 'startSession to first recorded event', value: `${firstMs.toFixed(1)} ms`, target: `<= ${TARGET_FIRST_EVENT_MS} ms`, met: firstMs <= TARGET_FIRST_EVENT_MS });

    // `node -e 0` as a whole process.
    if (!existsSync(TIME)) {
      console.log(`  (no ${TIME}: the whole-process figures are skipped)`);
      return checks;
    }
    // Register alone: a few milliseconds against a `node -e 0` that moves by ±10 ms on a busy
    // machine, so more rounds than the sessions get, and the variants only it needs.
    const registers = {
      'node -e 0': { nodeArgs: [], env: {} },
      // What any --import costs Node itself (its ES module loader starts): the floor under register's.
      '--import of an empty module': { nodeArgs: ['--import', EMPTY_MODULE], env: {} },
      '--import tracepipe/register': { nodeArgs: ['--import', 'tracepipe/register'], env: {} },
      // An attachable process without Node's ES module loader (src/register.cts).
      '--require tracepipe/register': { nodeArgs: ['--require', 'tracepipe/register'], env: {} },
      ...(BEFORE ? { '--import tracepipe/register (before)': { nodeArgs: ['--import', beforeFile('register.js')], env: {} } } : {}),
    };
    const alone = await processTable(REGISTER_ROUNDS, registers, dir);
    const overEmpty = alone.over('--import tracepipe/register', '--import of an empty module');
    row('--import tracepipe/register above an empty --import', `${overEmpty.toFixed(1)} ms wall (median of per-round differences)`);
    const registerMs = alone.over('--import tracepipe/register');
    const requiredMs = alone.over('--require tracepipe/register');
    checks.push({ check: '--import tracepipe/register alone, wall above node -e 0', value: `${registerMs.toFixed(1)} ms`, target: `<= ${TARGET_REGISTER_MS} ms`, met: registerMs <= TARGET_REGISTER_MS });
    checks.push({ check: '--require tracepipe/register, wall above node -e 0', value: `${requiredMs.toFixed(1)} ms`, target: `<= ${TARGET_REGISTER_MS} ms`, met: requiredMs <= TARGET_REGISTER_MS });
    // What any --import costs first (Node's ES module loader starting: +0 to +9 ms on Node 20 here), then register's own.
    checks.push({ check: '--import tracepipe/register alone, wall above an empty --import', value: `${overEmpty.toFixed(1)} ms`, target: `<= ${TARGET_REGISTER_MS} ms`, met: overEmpty <= TARGET_REGISTER_MS });

    const output = join(dir, 'startup-{pid}.tptrace');
    const variants = {
      'node -e 0': { nodeArgs: [], env: {} },
      'startup session (TRACEPIPE_ENABLE=1)': { nodeArgs: ['--import', 'tracepipe/register'], env: { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: output } },
      // The same through the worker drain, the native drain's fallback (src/sinks/native-drain.ts).
      'startup session, worker drain (TRACEPIPE_NATIVE_DRAIN=0)': { nodeArgs: ['--import', 'tracepipe/register'], env: { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: output, TRACEPIPE_NATIVE_DRAIN: '0' } },
      // The watchdog's thread from the start, as before it waited a second (docs/PROVIDERS.md, "In the first second").
      'startup session, watchdog thread at once (TRACEPIPE_WATCHDOG_AFTER_MS=0)': { nodeArgs: ['--import', 'tracepipe/register'], env: { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: output, TRACEPIPE_WATCHDOG_AFTER_MS: '0' } },
      // V8 optimising nothing: the modules' loading makes it optimise Node's path functions (node:path,
      // file URLs) during the start, which pages in more of the node binary (§38).
      'startup session, node --no-opt': { nodeArgs: ['--no-opt', '--import', 'tracepipe/register'], env: { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: output } },
      // A provider that needs no watchdog thread: what the session's drain and machinery cost alone.
      'startup session of Runtime.Process alone': { nodeArgs: ['--import', 'tracepipe/register'], env: { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: output, TRACEPIPE_PROVIDERS: 'Runtime.Process' } },
      'flight recorder (TRACEPIPE_FLIGHT_RECORDER=16)': { nodeArgs: ['--import', 'tracepipe/register'], env: { TRACEPIPE_FLIGHT_RECORDER: '16', TRACEPIPE_FLIGHT_DIR: dir } },
      ...(BEFORE ? { 'startup session (before)': { nodeArgs: ['--import', beforeFile('register.js')], env: { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: output } } } : {}),
    };
    const sessionsTable = await processTable(PROCESS_ROUNDS, variants, dir);
    const sessionMs = sessionsTable.over('startup session (TRACEPIPE_ENABLE=1)');
    const sessionMB = sessionsTable.over('startup session (TRACEPIPE_ENABLE=1)', 'node -e 0', 'rssMB');
    checks.push({ check: 'startup session, wall above node -e 0', value: `${sessionMs.toFixed(0)} ms`, target: `<= ${TARGET_SESSION_WALL_MS} ms`, met: sessionMs <= TARGET_SESSION_WALL_MS });
    checks.push({ check: 'startup session, peak RSS above node -e 0', value: `${sessionMB.toFixed(1)} MB`, target: `<= ${TARGET_SESSION_RSS_MB} MB`, met: sessionMB <= TARGET_SESSION_RSS_MB });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return checks;
}
