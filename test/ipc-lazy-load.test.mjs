// `--import tracepipe/register` loads only the diagnostics server: the session machinery (sessions,
// drain, providers, the thread's host) loads when a client first asks for a session, and then works
// as if it had been there from the start. A real target process; what it loaded is read from the
// host it installs on globalThis (docs/LITE.md).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { collectTracing, processInfo, readTrace, stopTracing } from '../dist/index.js';
import { startTarget, useTmpdir, waitFor } from './helpers/ipc-processes.mjs';

const BARE = fileURLToPath(new URL('./fixtures/bare-target.mjs', import.meta.url));
const dir = await useTmpdir(after);

test('the session machinery loads on the first session request, not at --import nor for ProcessInfo', { timeout: 60_000 }, async (t) => {
  const target = await startTarget(t, dir, { script: BARE });
  assert.equal(await target.ask('host'), 'false', 'register alone installs no host');
  const info = await processInfo(target.pid);
  assert.deepEqual(info.sessions, []);
  assert.equal(await target.ask('host'), 'false', 'answering ProcessInfo loads nothing');

  const stream = await collectTracing(target.pid, { providers: 'Runtime.Process', bufferingMode: 'drop', bufferSizeMB: 1, rundown: true });
  const chunks = [];
  const drained = (async () => {
    for await (const c of stream) chunks.push(c);
  })();
  assert.equal(await target.ask('host'), 'true', 'the first CollectTracing loaded it');
  const listed = await waitFor('the session to be listed', async () => (await processInfo(target.pid)).sessions.find((s) => s.id === stream.sessionId));
  assert.match(listed.providers, /^Runtime\.Process:/);
  assert.equal(listed.attached, true);
  // A built-in provider named by a session started this late still writes (the public entry defined it).
  const result = await stopTracing(target.pid, stream.sessionId);
  await drained;
  assert.equal(result.status, 'stopped');
  const providers = [];
  for await (const e of readTrace((async function* () {
    yield Buffer.concat(chunks);
  })())) providers.push(e.provider);
  assert.ok(providers.length > 0 && providers.length === result.eventsWritten, `${providers.length} events read, ${result.eventsWritten} written`);
  assert.deepEqual([...new Set(providers)], ['Runtime.Process']);
  assert.deepEqual((await processInfo(target.pid)).sessions, []);
  await target.exit();
});

test('the server starts on the main thread only, which is known without worker_threads where /proc says it', async () => {
  const { isMainThread } = await import('../dist/schema/this-thread.js');
  assert.equal(isMainThread(), true);
  const serverUrl = new URL('../dist/ipc/diagnostics-server.js', import.meta.url).href;
  const mainThreadUrl = new URL('../dist/schema/this-thread.js', import.meta.url).href;
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     Promise.all([import(${JSON.stringify(mainThreadUrl)}).then((m) => m.isMainThread()), import(${JSON.stringify(serverUrl)}).then((m) => m.startDiagnosticServer()).then(() => 'started', (e) => e.message)])
       .then((r) => parentPort.postMessage(r));`,
    { eval: true },
  );
  const [[main, started]] = await once(worker, 'message');
  await worker.terminate();
  assert.equal(main, false);
  assert.equal(started, 'tracepipe: the diagnostics server runs on the main thread');
});
