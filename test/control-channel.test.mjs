// How worker threads hear of sessions (src/session/control-channel.ts) costs the application nothing
// it did not ask for: on Node 22 and 24 a BroadcastChannel's MessageEvent loads undici on the thread
// that receives it (44–47 ms on Node 24), which tracepipe's control channel must not cause, on the
// main thread (a worker's hello) or on a worker (a session's open).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BroadcastChannel } from 'node:worker_threads';
import { promisify } from 'node:util';
import { readTrace } from '../dist/index.js';
import { onChannelData } from '../dist/session/channel-data.js';
import { tempDir } from './helpers/temp-dir.mjs';

const INDEX = new URL('../dist/index.js', import.meta.url).href;

test('a worker that was there first and one made later both join a session over the control channel, and no thread loads undici for it', { timeout: 120_000 }, async (t) => {
  const file = join(await tempDir(t), 'control.tptrace');
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_')));
  const code = `
    import { Worker } from 'node:worker_threads';
    import { once } from 'node:events';
    const tp = await import(${JSON.stringify(INDEX)});
    const body = (name) => \`
      const { parentPort } = require('node:worker_threads');
      import(${JSON.stringify(INDEX)}).then(({ defineProvider }) => {
        const p = defineProvider('Test.Control', { events: { Mark: { id: 1, fields: [['who', 'string']] } } });
        parentPort.postMessage('ready');
        // Writes until it is told to stop: it records once it has joined the session.
        const timer = setInterval(() => p.Mark.write('\${name}'), 5);
        parentPort.once('message', () => {
          clearInterval(timer);
          parentPort.postMessage(process.moduleLoadList.filter((m) => m.includes('undici')));
        });
      });\`;
    const start = async (name) => {
      const w = new Worker(body(name), { eval: true, execArgv: [] });
      const exited = once(w, 'exit');
      await once(w, 'message');
      return { w, exited };
    };
    const first = await start('first');
    const s = await tp.startSession({ providers: 'Test.Control', output: ${JSON.stringify(file)} });
    const later = await start('later');
    await new Promise((r) => setTimeout(r, 400));
    const undici = {};
    for (const [name, { w, exited }] of [['first', first], ['later', later]]) {
      w.postMessage('stop');
      [undici[name]] = await once(w, 'message');
      await exited;
    }
    await s.stop();
    undici.main = process.moduleLoadList.filter((m) => m.includes('undici'));
    process.stdout.write(JSON.stringify(undici));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], { env, timeout: 90_000 });
  assert.deepEqual(JSON.parse(stdout), { first: [], later: [], main: [] }, 'no thread loaded undici');
  const who = new Set();
  for await (const e of readTrace(file)) if (e.name === 'Mark') who.add(e.fields.who);
  assert.deepEqual([...who].sort(), ['first', 'later'], 'both workers recorded into the session');
});

test("a channel laid out otherwise than Node 20 to 24's is heard through its onmessage", () => {
  const heard = [];
  const channel = {};
  onChannelData(channel, (data) => heard.push(data));
  channel.onmessage({ data: { type: 'hello' } });
  assert.deepEqual(heard, [{ type: 'hello' }]);
});

test('what onChannelData returns stops it hearing even the messages already on their way', async () => {
  const name = `tracepipe-test-${process.pid}`;
  const sender = new BroadcastChannel(name);
  const channel = new BroadcastChannel(name);
  let heard = 0;
  const stop = onChannelData(channel, () => {
    heard++;
    stop();
    channel.close();
  });
  for (let i = 0; i < 5; i++) sender.postMessage(i);
  // Another channel of the name, made after them, hears what is sent after it: then all five have arrived.
  const last = new BroadcastChannel(name);
  const done = new Promise((resolve) => (last.onmessage = resolve));
  sender.postMessage('last');
  await done;
  last.close();
  sender.close();
  assert.equal(heard, 1);
});

// A session's open publishes it for the worker threads made later in the native addon's process-wide
// list (src/session/published-sessions.ts), not in worker_threads' environment data: on a main thread
// that has not loaded node:worker_threads no worker exists to tell, so a startup session loads
// neither it nor node:stream (2–5 ms); nor does Runtime.GCHeap's first sample load node:v8 (which
// loads node:stream too), reading V8's heap statistics through the addon. A worker made afterwards still joins from its first event,
// through another copy of tracepipe too (its own files and addon), as environment data did; and the
// process lives on as that worker ends, though it unloads the other copy's addons (they stay mapped).
const nativeDrain = join(fileURLToPath(new URL('..', import.meta.url)), 'native/gc-hook/build/Release/native_drain.node');
const withAddon = existsSync(nativeDrain) && process.env.TRACEPIPE_GC_HOOK !== '0' ? false : 'the native addon is not built here (or turned off)';

test("a startup session loads no worker_threads, node:stream or node:v8 on the main thread; a worker made afterwards joins it from its first event, through this copy of tracepipe and another", { skip: withAddon, timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  const root = fileURLToPath(new URL('..', import.meta.url));
  // Another copy: its own files and its own addon's file (a link would load the same one).
  const copy = join(dir, 'copy');
  await cp(join(root, 'dist'), join(copy, 'dist'), { recursive: true });
  await cp(join(root, 'package.json'), join(copy, 'package.json'));
  await cp(join(root, 'native/gc-hook/build/Release'), join(copy, 'native/gc-hook/build/Release'), { recursive: true });
  const file = join(dir, 'startup.tptrace');
  const worker = (index, who) => `
    const t = await import(${JSON.stringify(index)});
    const p = t.defineProvider('Test.Published', { events: { Mark: { id: 1, fields: [['who', 'string']] } } });
    p.Mark.write(${JSON.stringify(who)});`;
  const code = `
    const before = process.moduleLoadList.filter((m) => /^NativeModule (worker_threads|internal\\/worker|internal\\/worker\\/io|stream|v8)$/.test(m));
    const { Worker } = await import('node:worker_threads');
    const { once } = await import('node:events');
    for (const [index, who] of [[${JSON.stringify(INDEX)}, 'this copy'], [${JSON.stringify(pathToFileURL(join(copy, 'dist/index.js')).href)}, 'another copy']]) {
      const w = new Worker((${worker.toString()})(index, who), { eval: true, type: 'module' });
      await once(w, 'exit');
    }
    process.stdout.write(JSON.stringify(before));`;
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_')));
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', new URL('../dist/register.js', import.meta.url).href, '--input-type=module', '-e', code], {
    env: { ...env, TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: 'Runtime.GC,Test.Published', TRACEPIPE_OUTPUT: file },
    timeout: 90_000,
  });
  assert.deepEqual(JSON.parse(stdout), [], 'the startup session loaded none of the worker machinery on the main thread');
  const who = [];
  for await (const e of readTrace(file)) if (e.name === 'Mark') who.push(e.fields.who);
  assert.deepEqual(who.sort(), ['another copy', 'this copy'], "each worker's first event is in the trace");
});

// A worker that cannot read the published list (its environment turns the addon off, or another copy
// of tracepipe without one loads first in it) hears of a startup session that opened before the main
// thread loaded worker_threads once it asks: the main thread makes its channel as the first worker is
// made, and answers the worker's hello. Its events from then on are recorded (those before, at its
// very start, are not: environment data was copied as the worker was made).
test('a worker made right after a startup session, without the addon, joins it as the main thread answers its hello', { skip: withAddon, timeout: 120_000 }, async (t) => {
  const file = join(await tempDir(t), 'startup.tptrace');
  const code = `
    const { Worker } = await import('node:worker_threads');
    const { once } = await import('node:events');
    const w = new Worker(\`
      const t = await import(${JSON.stringify(INDEX)});
      const p = t.defineProvider('Test.Published', { events: { Mark: { id: 1, fields: [['who', 'string']] } } });
      await new Promise((r) => setTimeout(r, 300));
      p.Mark.write('later');\`, { eval: true, type: 'module', env: { ...process.env, TRACEPIPE_GC_HOOK: '0' } });
    await once(w, 'exit');`;
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_')));
  await promisify(execFile)(process.execPath, ['--import', new URL('../dist/register.js', import.meta.url).href, '--input-type=module', '-e', code], {
    env: { ...env, TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: 'Runtime.GC,Test.Published', TRACEPIPE_OUTPUT: file },
    timeout: 90_000,
  });
  const who = [];
  for await (const e of readTrace(file)) if (e.name === 'Mark') who.push(e.fields.who);
  assert.deepEqual(who, ['later']);
});
