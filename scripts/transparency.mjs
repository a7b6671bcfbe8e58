// The differential check of transparency over more real test suites than CI runs (README.md,
// "Transparency"): each package's own tests, from its npm tarball (pinned devDependencies), run
// untraced twice and once under a startup session of every runtime provider and Node.Channels
// (`--import tracepipe/register`), compared test by test and by each test file's stderr. A test that
// differs between the two untraced runs is flaky. One that differs traced is rechecked: its file
// runs RECHECKS more times untraced, traced, and with an `--import` of an empty module (the control
// for what any `--import` changes in Node). It is tracepipe's difference only if untraced and traced
// each always give their own outcome and the empty `--import` gives the untraced one. Every trace
// must read back complete. `npm run transparency [-- name...]`; exits 1 on a difference of tracepipe's.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, comparableStderr, differences, importOnlyEnv, packageDir, runSuite, stderrDifferences, tally, testFiles, tracedEnv } from '../test/helpers/suite-differential.mjs';

const SUITES = {
  // The router under fastify: route tables, constraints, an http server.
  'find-my-way': { folder: 'test', pattern: /\.test\.js$/ },
  // fastify's plugin loader: promises, thenables, timers, child processes.
  avvio: { folder: 'test', pattern: /\.test\.js$/ },
  // pino's worker-thread stream: workers, SharedArrayBuffer, Atomics, GC, process exit.
  'thread-stream': { folder: 'test', pattern: /\.test\.(js|mjs)$/ },
  // Warnings and a child process's stderr (also in CI: test/transparency-suites.test.mjs).
  'process-warning': { folder: 'test', pattern: /\.test\.js$/, skip: /jest\.test\.js$/ },
};
const TIMEOUT_MS = 20 * 60_000;
const RECHECKS = 4;

const asked = process.argv.slice(2);
const unknown = asked.filter((n) => !(n in SUITES));
if (unknown.length > 0) {
  console.error(`unknown suite ${unknown.join(', ')}; choose from: ${Object.keys(SUITES).join(', ')}`);
  process.exit(2);
}

/** What one run says about a test (its outcome) or a file (its stderr, as compared). */
const outcomeOf = (key) => (run) => run.outcomes.get(key)?.outcome ?? 'absent';
const stderrOf = (file) => (run) => comparableStderr(run.fileStderr.get(file) ?? '');

/**
 * Reruns `file` RECHECKS times in each of three ways and classifies each of `checks` ({ label, read }):
 * 'tracepipe' (untraced and the empty --import always give one answer, traced always another),
 * 'import' (the empty --import gives the traced answer: Node's doing under any --import), or 'flaky'.
 */
async function recheck(dir, file, checks, traceDir) {
  const ways = { untraced: process.env, importOnly: importOnlyEnv(), traced: tracedEnv(traceDir) };
  const seen = Object.fromEntries(Object.keys(ways).map((w) => [w, checks.map(() => new Set())]));
  for (let k = 0; k < RECHECKS; k++) {
    const order = Object.keys(ways);
    for (const way of k % 2 ? order.reverse() : order) {
      const run = await runSuite({ dir, files: [file], env: ways[way], timeoutMs: TIMEOUT_MS });
      checks.forEach((c, i) => seen[way][i].add(c.read(run)));
    }
  }
  return checks.map((c, i) => {
    const [u, m, t] = ['untraced', 'importOnly', 'traced'].map((w) => [...seen[w][i]]);
    const steady = u.length === 1 && m.length === 1 && t.length === 1 && u[0] !== t[0];
    const verdict = !steady ? 'flaky' : m[0] === u[0] ? 'tracepipe' : m[0] === t[0] ? 'import' : 'flaky';
    return { ...c, verdict, counts: `untraced ${u.length}, empty --import ${m.length}, traced ${t.length} distinct answers in ${RECHECKS} runs each` };
  });
}

let changed = 0;
for (const name of asked.length > 0 ? asked : Object.keys(SUITES)) {
  const { folder, pattern, skip } = SUITES[name];
  const dir = packageDir(name);
  const files = (await testFiles(dir, folder, pattern)).filter((f) => !skip?.test(f));
  const traceDir = mkdtempSync(join(tmpdir(), `tracepipe-transparency-${name}-`));
  const t0 = performance.now();
  const first = await runSuite({ dir, files, timeoutMs: TIMEOUT_MS });
  const traced = await runSuite({ dir, files, env: tracedEnv(traceDir), timeoutMs: TIMEOUT_MS });
  const second = await runSuite({ dir, files, timeoutMs: TIMEOUT_MS });
  const version = execFileSync(process.execPath, ['-p', "require('./package.json').version"], { cwd: dir, encoding: 'utf8' }).trim();
  console.log(`\n== ${name} ${version}: ${files.length} files, ${first.outcomes.size} tests (${((performance.now() - t0) / 1000).toFixed(0)} s for three runs)`);
  console.log(`  untraced ${JSON.stringify(tally(first.outcomes))} (again: ${JSON.stringify(tally(second.outcomes))}), exit ${first.code}/${second.code}`);
  console.log(`  traced   ${JSON.stringify(tally(traced.outcomes))}, exit ${traced.code}`);

  const keyOf = (line) => line.slice(0, line.indexOf(': untraced'));
  const flaky = new Set(differences(first.outcomes, second.outcomes).map(keyOf));
  for (const key of flaky) console.log(`  flaky untraced (not counted): ${key}`);
  const unsteady = new Set(stderrDifferences(first, second));
  // What to recheck, by file: tests that differ traced, and files whose stderr does.
  const byFile = new Map();
  const add = (file, check) => byFile.set(file, [...(byFile.get(file) ?? []), check]);
  for (const line of new Set([...differences(first.outcomes, traced.outcomes), ...differences(second.outcomes, traced.outcomes)])) {
    const key = keyOf(line);
    if (flaky.has(key)) continue;
    add(files.find((f) => key === f || key.startsWith(`${f} > `)) ?? files[0], { label: line, read: outcomeOf(key) });
  }
  for (const file of stderrDifferences(first, traced).filter((f) => !unsteady.has(f))) {
    add(file, { label: `stderr of ${file}; traced:\n${(traced.fileStderr.get(file) ?? '').slice(0, 1200)}`, read: stderrOf(file) });
  }
  let ours = 0;
  for (const [file, checks] of byFile) {
    for (const r of await recheck(dir, file, checks, traceDir)) {
      const say = { tracepipe: 'DIFFERS (tracepipe)', import: 'differs under any --import, an empty module too (Node, not tracepipe)', flaky: 'flaky (not counted)' }[r.verdict];
      console.log(`  ${say} [${r.counts}]: ${r.label}`);
      if (r.verdict === 'tracepipe') ours++;
    }
  }
  if (traced.code !== first.code && first.code === second.code && ours === 0 && byFile.size === 0) {
    ours++;
    console.log(`  DIFFERS: the runner's exit code, ${traced.code} traced, ${first.code} untraced`);
  }
  if (comparableStderr(traced.stderr) !== comparableStderr(first.stderr) && comparableStderr(first.stderr) === comparableStderr(second.stderr)) {
    ours++;
    console.log(`  DIFFERS: the runner's stderr, traced:\n${traced.stderr.slice(0, 2000)}`);
  }
  const traces = readdirSync(traceDir).filter((f) => f.endsWith('.tptrace'));
  let incomplete = 0;
  for (const f of traces) {
    try {
      const stats = execFileSync(process.execPath, [CLI, 'stats', join(traceDir, f)], { encoding: 'utf8' });
      if (/WARNING/.test(stats)) throw new Error(stats);
    } catch (e) {
      incomplete++;
      console.log(`  INCOMPLETE TRACE ${f}: ${String(e.message).slice(0, 500)}`);
    }
  }
  console.log(`  traces: ${traces.length}, ${traces.length - incomplete} complete`);
  if (ours > 0 || incomplete > 0) changed++;
  else console.log(`  no difference of tracepipe's`);
  rmSync(traceDir, { recursive: true, force: true });
}
process.exitCode = changed > 0 ? 1 : 0;
