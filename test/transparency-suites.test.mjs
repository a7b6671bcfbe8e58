// Issue 21: tracing must change nothing the application sees. A test suite written elsewhere, the one
// process-warning ships in its npm tarball (node:test; it checks the warnings a process emits and a
// child process's stderr), passes exactly the same tests, with the same exit code and the same
// stderr, under a startup session of every runtime provider and Node.Channels as without one; and
// every process's trace reads back complete. The other suites run from scripts/transparency.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, differences, EVERY_RUNTIME_PROVIDER, packageDir, runSuite, stderrDifferences, tally, testFiles, tracedEnv } from './helpers/suite-differential.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

test('process-warning’s own test suite: the same tests pass traced (every runtime provider and Node.Channels) as untraced', { timeout: 240_000 }, async (t) => {
  const dir = packageDir('process-warning');
  // jest.test.js is run by jest in the package's own scripts, not by node:test.
  const files = (await testFiles(dir, 'test', /\.test\.js$/)).filter((f) => !f.endsWith('jest.test.js'));
  const traceDir = await tempDir(t);
  const untraced = await runSuite({ dir, files, timeoutMs: 120_000 });
  const traced = await runSuite({ dir, files, env: tracedEnv(traceDir), timeoutMs: 120_000 });

  t.diagnostic(`untraced ${JSON.stringify(tally(untraced.outcomes))}, traced ${JSON.stringify(tally(traced.outcomes))}`);
  assert.ok(untraced.outcomes.size >= 20, `the suite ran (${untraced.outcomes.size} tests)`);
  assert.deepEqual(differences(untraced.outcomes, traced.outcomes), [], 'tests whose outcome differs');
  assert.deepEqual(tally(traced.outcomes), tally(untraced.outcomes));
  assert.equal(traced.code, untraced.code, 'the runner exits with the same code');
  assert.equal(traced.stderr, untraced.stderr, 'the runner: tracing writes nothing to stderr');
  const differing = stderrDifferences(untraced, traced);
  const shown = differing.map((f) => `${f}:\n--- untraced\n${untraced.fileStderr.get(f) ?? ''}\n--- traced\n${traced.fileStderr.get(f) ?? ''}`).join('\n');
  assert.deepEqual(differing, [], `test files whose stderr differs (stack frames aside):\n${shown}`);

  // One trace per process: the runner, each test file's process and the children they start.
  const traces = readdirSync(traceDir).filter((f) => f.endsWith('.tptrace'));
  assert.ok(traces.length >= files.length + 1, `a trace from every process (${traces.length} for ${files.length} files)`);
  t.diagnostic(`${traces.length} traces, each complete`);
  for (const f of traces) {
    const stats = execFileSync(process.execPath, [CLI, 'stats', join(traceDir, f)], { encoding: 'utf8' });
    assert.doesNotMatch(stats, /WARNING/, `${f} is complete:\n${stats}`);
    const session = /^session\s+(\S+)/m.exec(stats)?.[1] ?? '';
    for (const p of EVERY_RUNTIME_PROVIDER.split(',')) assert.ok(session.includes(`${p.split(':')[0]}:`), `${f}'s session has ${p}: ${session}`);
  }
});
