// A file session the program never stops neither keeps the process alive nor loses its tail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTrace } from '../dist/index.js';

const dist = new URL('../dist/index.js', import.meta.url).href;

for (const ending of ['the event loop empties', 'process.exit()']) {
  test(`an unstopped file session: the process ends when ${ending} and the file is complete`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'tracepipe-exit-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'out.tptrace');
    const src = `
      const { defineProvider, startSession } = await import(${JSON.stringify(dist)});
      const p = defineProvider('Test.Exit', { events: { E: { id: 1, fields: [['i', 'u32']] } } });
      await startSession({ providers: 'Test.Exit', output: ${JSON.stringify(file)} });
      for (let i = 0; i < 1000; i++) p.E.write(i);
      setTimeout(() => { p.E.write(1000); ${ending === 'process.exit()' ? 'process.exit(3);' : ''} }, 50);`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', src], { timeout: 30_000, encoding: 'utf8' });
    assert.equal(r.error, undefined, 'the process must end on its own');
    assert.equal(r.status, ending === 'process.exit()' ? 3 : 0, r.stderr);
    const s = await readTrace(file).summary();
    assert.equal(s.complete, true);
    assert.equal(s.events, 1001);
    assert.equal(s.dropped, 0);
  });
}

test('exit flush: sessions whose readers never read cost the exit its one bound (3 s) in all, not 3 s each', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-exit-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const SESSIONS = 8;
  // Each output is a connected socket whose peer never reads: once its buffers are full, the drain waits on it.
  const src = `
    import net from 'node:net';
    const { defineProvider, startSession } = await import(${JSON.stringify(dist)});
    const p = defineProvider('Test.Exit', { events: { E: { id: 1, fields: [['i', 'u32'], ['s', 'string']] } } });
    const server = net.createServer((peer) => peer.pause()).listen(${JSON.stringify(join(dir, 'sock'))});
    await new Promise((r) => server.once('listening', r));
    for (let i = 0; i < ${SESSIONS}; i++) {
      const socket = net.connect(${JSON.stringify(join(dir, 'sock'))});
      await new Promise((r) => socket.once('connect', r));
      await startSession({ providers: 'Test.Exit', output: { fd: socket._handle.fd } });
    }
    const text = 'x'.repeat(200);
    for (let i = 0; i < 20000; i++) p.E.write(i, text);
    await new Promise((r) => setTimeout(r, 300));
    process.stdout.write('exiting ' + Date.now() + '\\n');
    process.exit(5);`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', src], { timeout: 60_000, encoding: 'utf8', env: { ...process.env, TRACEPIPE_MAX_SESSIONS: String(SESSIONS) } });
  const exitedAt = Date.now();
  assert.equal(r.error, undefined, 'the process must end on its own');
  assert.equal(r.status, 5, r.stderr);
  const exitMs = exitedAt - Number(/exiting (\d+)/.exec(r.stdout)[1]);
  // One at a time the flush would take 8 x 3 s; together, 3 s and the drains' own shutdown.
  assert.ok(exitMs < (SESSIONS * 3000) / 2, `the exit took ${exitMs} ms`);
});
