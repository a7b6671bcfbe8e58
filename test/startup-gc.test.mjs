// A startup session's trace holds every collection of the main thread from the moment tracepipe's
// code first runs (issue 24): those tracepipe's own loading causes, before the session's stream
// exists, wait in the main thread's GC ring. Checked against V8's --trace-gc, with no tolerance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers/temp-dir.mjs';
import { checkMissingAfterFlush, expectGcHook, pairWithTraceGc, traceGcLines, traceGcOutput, tracedPauses } from './helpers/trace-gc.mjs';

const FIXTURE = fileURLToPath(new URL('./fixtures/gc-blocking.mjs', import.meta.url));
const REGISTER = new URL('../dist/register.js', import.meta.url).href;
const MARKER = 'tracepipe loads now';
// Imported just before tracepipe/register: what V8 prints after this line, tracepipe's code ran before.
const PRINT_MARKER = `data:text/javascript,process.stdout.write(${encodeURIComponent(JSON.stringify(`${MARKER}\n`))})`;
const hook = expectGcHook();

for (const [name, providers] of [['Runtime.GC alone', 'Runtime.GC'], ['the default profile', undefined]]) {
  test(`a startup session (${name}) of a program that never yields holds every main-thread collection from tracepipe's load on`, { skip: !hook && 'without the GC hook no pause is recorded before a session exists', timeout: 120_000 }, async (t) => {
    const dir = await tempDir(t);
    const file = join(dir, 'gc.tptrace');
    const out = await traceGcOutput(t, dir);
    const env = { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: file, GC_BLOCKING_ROUNDS: '1500' };
    delete env.TRACEPIPE_PROVIDERS;
    if (providers) env.TRACEPIPE_PROVIDERS = providers;
    const fd = openSync(out, 'w');
    const args = ['--expose-gc', '--trace-gc', '--max-semi-space-size=1', `--import=${PRINT_MARKER}`, `--import=${REGISTER}`, FIXTURE, 'main', 'natural'];
    const child = spawn(process.execPath, args, { stdio: ['ignore', fd, 'pipe'], env });
    closeSync(fd);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const [code] = await once(child, 'close');
    assert.equal(code, 0, stderr);
    const text = await readFile(out, 'utf8');
    assert.ok(text.includes(MARKER), 'the marker was printed');
    const lines = traceGcLines(text);
    // The main isolate's collections V8 printed before the marker: they are not tracepipe's to record.
    const before = traceGcLines(`${text.slice(0, text.indexOf(MARKER))}${lines.find((l) => l.forced).text}\n`).length - 1;
    const { thread, pauses, flushedMs } = await tracedPauses(file);
    assert.equal(thread, 0, 'the main thread ran gc()');
    const { pairs, first, end } = pairWithTraceGc(lines, pauses);
    const sinceLoad = lines.slice(before, lines.findIndex((l) => l.forced));
    t.diagnostic(`${sinceLoad.length} collections between tracepipe's load and the program's first gc(); ${lines.length - before} since the load in all, ${end - first} traced`);
    assert.ok(first <= before, `the first ${first - before} of the ${sinceLoad.length} collections after tracepipe loaded are missing: ${lines.slice(before, first).map((l) => l.text).join(' | ')}`);
    checkMissingAfterFlush(lines, end, pairs, flushedMs);
  });
}

test("a startup session that records no pauses lets go of them: a session started later holds none from before its start", { skip: !hook && 'without the GC hook nothing is held', timeout: 60_000 }, async (t) => {
  const dir = await tempDir(t);
  const later = join(dir, 'later.tptrace');
  const INDEX = new URL('../dist/index.js', import.meta.url).href;
  const program = `const { startSession } = await import(${JSON.stringify(INDEX)});
    const s = await startSession({ providers: 'Runtime.GC', output: ${JSON.stringify(later)} });
    globalThis.gc();
    await s.stop();`;
  const env = { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: join(dir, 'startup.tptrace'), TRACEPIPE_PROVIDERS: 'Runtime.Process' };
  const child = spawn(process.execPath, ['--expose-gc', '--max-semi-space-size=1', `--import=${REGISTER}`, '--input-type=module', '-e', program], { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const [code] = await once(child, 'close');
  assert.equal(code, 0, stderr);
  const { pauses } = await tracedPauses(later);
  assert.ok(pauses.length >= 1, 'the forced collection is traced');
  assert.deepEqual(pauses.filter((p) => p.startMs < 0).map((p) => `${p.kind} at ${p.startMs.toFixed(3)} ms`), [], 'no pause from before the session');
});
