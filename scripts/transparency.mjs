// The differential check of transparency over more real test suites than CI runs (docs in README.md,
// "Transparency"): each package's own tests, from its npm tarball (pinned devDependencies), run
// untraced twice and once under a startup session of every runtime provider and Node.Channels, and
// are compared test by test. A test whose outcome differs between the two untraced runs is flaky and
// said so; one that is stable untraced and differs traced is a difference tracing made. Every trace
// must read back complete. `npm run transparency [-- name...]`; exits 1 on a difference.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, comparableStderr, differences, packageDir, runSuite, stderrDifferences, tally, testFiles, tracedEnv } from '../test/helpers/suite-differential.mjs';

const SUITES = {
  // The router under fastify: route tables, constraints, an http server.
  'find-my-way': { folder: 'test', pattern: /\.test\.js$/ },
  // fastify's plugin loader: promises, thenables, timers, child processes.
  avvio: { folder: 'test', pattern: /\.test\.js$/ },
  // pino's worker-thread stream: workers, SharedArrayBuffer, Atomics, process exit.
  'thread-stream': { folder: 'test', pattern: /\.test\.(js|mjs)$/ },
  // Warnings and a child process's stderr (also in CI: test/transparency-suites.test.mjs).
  'process-warning': { folder: 'test', pattern: /\.test\.js$/, skip: /jest\.test\.js$/ },
};

const asked = process.argv.slice(2);
const unknown = asked.filter((n) => !(n in SUITES));
if (unknown.length > 0) {
  console.error(`unknown suite ${unknown.join(', ')}; choose from: ${Object.keys(SUITES).join(', ')}`);
  process.exit(2);
}

const TIMEOUT_MS = 20 * 60_000;
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
  const version = JSON.parse(execFileSync(process.execPath, ['-p', `JSON.stringify(require('${name}/package.json').version)`], { cwd: dir, encoding: 'utf8' }));
  console.log(`\n== ${name} ${version}: ${files.length} files, ${first.outcomes.size} tests (${((performance.now() - t0) / 1000).toFixed(0)} s for three runs)`);
  console.log(`  untraced ${JSON.stringify(tally(first.outcomes))} (again: ${JSON.stringify(tally(second.outcomes))}), exit ${first.code}/${second.code}`);
  console.log(`  traced   ${JSON.stringify(tally(traced.outcomes))}, exit ${traced.code}`);
  const flaky = new Set(differences(first.outcomes, second.outcomes).map((l) => l.slice(0, l.indexOf(': untraced'))));
  for (const key of flaky) console.log(`  flaky untraced (not counted): ${key}`);
  const found = [...differences(first.outcomes, traced.outcomes), ...differences(second.outcomes, traced.outcomes)].filter((l) => !flaky.has(l.slice(0, l.indexOf(': untraced'))));
  const shown = [...new Set(found)];
  for (const line of shown.slice(0, 30)) console.log(`  DIFFERS: ${line}`);
  if (shown.length > 30) console.log(`  ... and ${shown.length - 30} more`);
  // What a test file's process printed to stderr, where traced and untraced differ.
  const unsteady = new Set(stderrDifferences(first, second));
  for (const file of stderrDifferences(first, traced).filter((f) => !unsteady.has(f))) {
    found.push(`stderr of ${file}`);
    console.log(`  DIFFERS: stderr of ${file}, traced:\n${(traced.fileStderr.get(file) ?? '').slice(0, 1500)}\n  untraced:\n${(first.fileStderr.get(file) ?? '').slice(0, 1500)}`);
  }
  if (traced.code !== first.code && first.code === second.code) found.push(`exit code ${traced.code} traced, ${first.code} untraced`);
  if (comparableStderr(traced.stderr) !== comparableStderr(first.stderr) && comparableStderr(first.stderr) === comparableStderr(second.stderr)) {
    found.push('stderr');
    console.log(`  DIFFERS: stderr, traced:\n${traced.stderr.slice(0, 4000)}\n  untraced:\n${first.stderr.slice(0, 4000)}`);
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
  if (found.length > 0 || incomplete > 0) changed++;
  else console.log('  same tests, same outcomes');
  rmSync(traceDir, { recursive: true, force: true });
}
process.exitCode = changed > 0 ? 1 : 0;
