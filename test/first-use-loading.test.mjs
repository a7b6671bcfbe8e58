// What loads on first use, loaded where the application's own loading is under way or has changed
// the process: a worker that imports tracepipe and tracepipe/export at once while a session runs
// joins it; an event type whose writers are made at its first write, after code generation was
// taken away, still writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readTrace } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';

const INDEX = new URL('../dist/index.js', import.meta.url).href;
const EXPORT = new URL('../dist/export.js', import.meta.url).href;

/** Runs `code` as an ES module in a fresh process; its stdout. */
async function run(code) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRACEPIPE_')));
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], { env, timeout: 90_000 });
  return stdout;
}

test('workers that import tracepipe/export and tracepipe at once while a session runs load both and record into it', { timeout: 120_000 }, async (t) => {
  const file = join(await tempDir(t), 'workers.tptrace');
  const workers = 16;
  const out = await run(`
    import { Worker } from 'node:worker_threads';
    import { once } from 'node:events';
    const tp = await import(${JSON.stringify(INDEX)});
    const s = await tp.startSession({ providers: 'Runtime.GC', output: ${JSON.stringify(file)} });
    const body = \`
      import { parentPort } from 'node:worker_threads';
      const [exp, idx] = await Promise.allSettled([import(${JSON.stringify(EXPORT)}), import(${JSON.stringify(INDEX)})]);
      const junk = []; for (let i = 0; i < 300000; i++) junk.push({ i });
      await new Promise((r) => setTimeout(r, 20));
      parentPort.postMessage(exp.status + ' ' + idx.status + (idx.reason ? ' ' + idx.reason.message : ''));\`;
    for (let i = 0; i < ${workers}; i++) {
      const w = new Worker(new URL('data:text/javascript,' + encodeURIComponent(body)), { stderr: true });
      const id = w.threadId;
      const exited = once(w, 'exit');
      let stderr = ''; w.stderr.on('data', (d) => (stderr += d));
      const [m] = await once(w, 'message');
      await exited;
      console.log(m + (stderr ? ' stderr: ' + stderr.trim() : '') + ' thread ' + id);
    }
    await s.stop();`);
  const lines = out.trim().split('\n');
  assert.equal(lines.length, workers);
  for (const l of lines) assert.match(l, /^fulfilled fulfilled thread \d+$/, l);
  const withPauses = new Set();
  for await (const e of readTrace(file)) if (e.name === 'GCPause' && e.threadId !== 0) withPauses.add(e.threadId);
  assert.equal(withPauses.size, workers, `workers with GC pauses in the trace: ${withPauses.size} of ${workers}`);
});

test('an event type whose first write comes after code generation was taken away writes with closures, every time', { timeout: 60_000 }, async (t) => {
  const file = join(await tempDir(t), 'closures.tptrace');
  const out = await run(`
    const tp = await import(${JSON.stringify(INDEX)});
    const P = tp.defineProvider('App.Late', { events: { E: { id: 1, fields: [['n', 'u32'], ['s', 'string']] } } });
    const s = await tp.startSession({ providers: 'App.Late', output: ${JSON.stringify(file)} });
    // A hardening step after tracing started (as a lockdown does): no more code from strings.
    const F = globalThis.Function;
    globalThis.Function = function Function() { throw new EvalError('code generation from strings is refused'); };
    for (let n = 0; n < 3; n++) P.E.write(n, 'late ' + n);
    globalThis.Function = F;
    await s.stop();
    console.log('written');`);
  assert.match(out, /^written$/m);
  const events = [];
  for await (const e of readTrace(file)) if (e.name === 'E') events.push(e.fields);
  assert.deepEqual(events, [0, 1, 2].map((n) => ({ n, s: `late ${n}` })));
});
