// `tracepipe collect -- node app.js`: the child is traced from its first event through a startup
// session, the CLI stops when it exits, reports, and passes on its exit code.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { readTrace } from '../dist/index.js';
import { startCli, TARGET, useTmpdir } from './helpers/ipc-processes.mjs';

const dir = await useTmpdir(after);

test('launches the command traced from its start and stops when it exits', async (t) => {
  const file = join(dir, 'launch.tptrace');
  const r = await startCli(t, dir, ['collect', '--providers', 'Test.App', '-o', file, '--', process.execPath, TARGET, 'burst', '20000', '0']).done;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /^launched .*ipc-target\.mjs burst 20000 0 \(pid \d+\), tracing into .*launch\.tptrace\n/);
  assert.match(r.stdout, /wrote .*launch\.tptrace\n {2}20,000 events, 0 dropped/);
  assert.equal(statSync(file).mode & 0o077, 0, 'the trace holds argv and cwd: readable by its owner only');
  const s = await readTrace(file).summary();
  assert.equal(s.complete, true);
  // Every event, the very first included: the session was running before the application started.
  assert.equal(s.events, 20_000);
  assert.equal(s.threads[0].firstSeq, 0);
  assert.deepEqual(Object.keys(s.byEvent), ['Test.App/Tick']);
});

test("the child's exit code is the CLI's, and the trace is still complete; {pid} names the child's file", async (t) => {
  const r = await startCli(t, dir, ['collect', '--providers', 'Test.App', '-o', join(dir, 'code-{pid}.tptrace'), '--', process.execPath, TARGET, 'burst', '100', '7']).done;
  assert.equal(r.code, 7, r.stderr);
  const pid = /\(pid (\d+)\)/.exec(r.stderr)[1];
  const s = await readTrace(join(dir, `code-${pid}.tptrace`)).summary();
  assert.equal(s.complete, true);
  assert.equal(s.events, 100);
  assert.equal(s.header.pid, Number(pid));
});

test('a command killed by a signal: the CLI exits as a shell would (128 + the signal), says so, and the trace is complete', async (t) => {
  for (const [signal, status, body] of [
    ['SIGTERM', 143, "process.kill(process.pid, 'SIGTERM')"],
    ['SIGABRT', 134, 'process.abort()'],
  ]) {
    const file = join(dir, `killed-${signal}.tptrace`);
    const r = await startCli(t, dir, ['collect', '--providers', 'Runtime.Process', '-o', file, '--', process.execPath, '-e', body]).done;
    assert.equal(r.code, status, r.stderr);
    assert.match(r.stderr, new RegExp(`was killed by ${signal} \\(exit status ${status}\\)\n`));
    assert.match(r.stdout, new RegExp(`the command was killed by ${signal}`));
    if (signal === 'SIGTERM') {
      const s = await readTrace(file).summary();
      assert.equal(s.complete, true, s.error?.message);
    }
  }
});

test('a command that cannot be run: one line, non-zero exit', async (t) => {
  const r = await startCli(t, dir, ['collect', '-o', join(dir, 'none.tptrace'), '--', join(dir, 'no-such-program')]).done;
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^tracepipe: cannot run '.*no-such-program': spawn .* ENOENT\n$/);
});
