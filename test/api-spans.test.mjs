// Issue 12: spans (begin/end sharing a span id, the parent from the async context) and counters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { defineProvider, eventRole, Level, readTrace, startSession, typeRole } from '../dist/index.js';
import { recordSession } from './helpers/record-session.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const SEED = Number(process.env.TRACEPIPE_SPAN_SEED ?? 12_2026_11_23);
const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const REGISTER = fileURLToPath(new URL('../dist/register.js', import.meta.url));

const app = defineProvider('Test.Spans', {
  events: { Note: { id: 1, fields: [['text', 'string']] } },
  spans: {
    Request: { id: 10, level: Level.Informational, fields: [['route', 'string']], endFields: [['status', 'u16']] },
    Query: { id: 11, fields: [['sql', 'string']], endFields: [['rows', 'u32'], ['cached', 'bool'], ['note', 'string']] },
  },
  counters: { Inflight: { id: 20, unit: 'requests' }, Plain: { id: 21 } },
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));


/** Begins and ends by span id, as the trace shows them. */
function pairs(events) {
  const spans = new Map();
  for (const e of events) {
    const role = eventRole(e);
    if (role?.kind === 'span-begin') {
      assert.ok(!spans.has(e.fields.spanId), `span id ${e.fields.spanId} begins once`);
      spans.set(e.fields.spanId, { name: role.span, begin: e, end: undefined });
    } else if (role?.kind === 'span-end') {
      const s = spans.get(e.fields.spanId);
      assert.ok(s, `end of span ${e.fields.spanId} has a begin`);
      assert.equal(s.end, undefined, `span ${e.fields.spanId} ends once`);
      assert.ok(e.timestampNs >= s.begin.timestampNs, 'a span ends after it begins');
      s.end = e;
    }
  }
  return spans;
}

test('100 concurrent requests: every span across await, setTimeout and Promise.all has its own request as ancestor', { timeout: 60_000 }, async (t) => {
  const N = 100;
  // Seeded delays, so the interleaving differs between requests but every run is the same.
  const delays = fc.sample(fc.array(fc.integer({ min: 0, max: 6 }), { minLength: N * 5, maxLength: N * 5 }), { seed: SEED, numRuns: 1 })[0];
  const d = (i, k) => delays[i * 5 + k];
  const { events } = await recordSession(t, 'Test.Spans', async () => {
    await Promise.all(
      Array.from({ length: N }, (_, i) =>
        app.Request.run(async () => {
          const me = `req${i}`;
          await sleep(d(i, 0));
          // A child started from a timer callback.
          await new Promise((resolve) => setTimeout(() => app.Query.run(() => resolve(), `${me}/timer`), d(i, 1)));
          // Concurrent children, each with a grandchild after an await; a manual begin/end among them.
          await Promise.all([
            app.Query.run(async () => {
              await sleep(d(i, 2));
              await app.Query.run(() => sleep(d(i, 3)), `${me}/a/inner`);
            }, `${me}/a`),
            app.Query.run(async () => {
              const token = app.Query.begin(`${me}/b/manual`);
              await sleep(d(i, 4));
              app.Query.end(token, 7, true, 'done');
            }, `${me}/b`),
          ]);
        }, `req${i}`),
      ),
    );
  });
  const spans = pairs(events);
  const requests = [...spans.values()].filter((s) => s.name === 'Request');
  const queries = [...spans.values()].filter((s) => s.name === 'Query');
  assert.equal(requests.length, N);
  assert.equal(queries.length, N * 5);
  for (const r of requests) assert.equal(r.begin.fields.parentSpanId, 0n, 'a request is a root span');
  for (const q of queries) {
    assert.ok(q.end, `${q.begin.fields.sql} ended`);
    // The program's own knowledge (which request started the query) against the chain of parents.
    const owner = q.begin.fields.sql.split('/')[0];
    let s = q;
    const path = [];
    while (s.name !== 'Request') {
      path.unshift(s.begin.fields.sql);
      s = spans.get(s.begin.fields.parentSpanId);
      assert.ok(s, `${q.begin.fields.sql}: every parent is in the trace`);
    }
    assert.equal(s.begin.fields.route, owner, `${q.begin.fields.sql} descends from its own request`);
    // Nesting is exact: the grandchild's parent is its own child span, not the request.
    if (q.begin.fields.sql.endsWith('/inner') || q.begin.fields.sql.endsWith('/manual')) assert.equal(path.length, 2, `${q.begin.fields.sql} is a grandchild`);
  }
  const manual = queries.find((q) => q.begin.fields.sql === 'req0/b/manual');
  assert.deepEqual({ ...manual.end.fields }, { spanId: manual.begin.fields.spanId, error: false, errorName: '', rows: 7, cached: true, note: 'done' });
  const byRun = queries.find((q) => q.begin.fields.sql === 'req0/a');
  assert.deepEqual({ ...byRun.end.fields }, { spanId: byRun.begin.fields.spanId, error: false, errorName: '', rows: 0, cached: false, note: '' }, 'run ends with zero end fields');
});

test('run records an error end with the error name when fn throws or rejects, and rethrows the same error', async (t) => {
  const thrown = new RangeError('sync');
  const rejected = new TypeError('async');
  class DbError extends Error {
    name = 'DbError';
  }
  const { events } = await recordSession(t, 'Test.Spans', async () => {
    assert.throws(() => app.Query.run(() => {
      throw thrown;
    }, 'sync'), (e) => e === thrown);
    await assert.rejects(app.Query.run(async () => {
      await sleep(1);
      throw rejected;
    }, 'async'), (e) => e === rejected);
    await assert.rejects(app.Query.run(() => Promise.reject(new DbError('x')), 'custom'), DbError);
    assert.throws(() => app.Query.run(() => {
      throw 'a string';
    }, 'string'), (e) => e === 'a string');
    const token = app.Query.begin('manual');
    app.Query.fail(token, new SyntaxError('by hand'));
    // A thenable that is not a promise: the span ends as run returns; awaiting it is the caller's doing.
    const value = await app.Query.run(() => ({ then: (ok) => ok(42) }), 'thenable');
    assert.equal(value, 42);
  });
  const ends = Object.fromEntries([...pairs(events).values()].map((s) => [s.begin.fields.sql, s.end.fields]));
  assert.deepEqual([ends.sync.error, ends.sync.errorName], [true, 'RangeError']);
  assert.deepEqual([ends.async.error, ends.async.errorName], [true, 'TypeError']);
  assert.deepEqual([ends.custom.error, ends.custom.errorName], [true, 'DbError']);
  assert.deepEqual([ends.string.error, ends.string.errorName], [true, 'string']);
  assert.deepEqual([ends.manual.error, ends.manual.errorName], [true, 'SyntaxError']);
  assert.deepEqual([ends.thenable.error, ends.thenable.errorName], [false, '']);
});

test('disabled: enabled is a plain false property, begin returns 0, run just calls fn, end/fail of token 0 write nothing', async (t) => {
  for (const m of [app.Request, app.Query, app.Inflight]) {
    const d = Object.getOwnPropertyDescriptor(m, 'enabled');
    assert.ok(d && 'value' in d && d.value === false, `${m.name}.enabled is a false data property`);
  }
  assert.equal(app.Query.begin('x'), 0);
  let calls = 0;
  const result = app.Query.run(function () {
    calls++;
    assert.equal(this, undefined, 'fn is called directly');
    assert.equal(arguments.length, 0);
    return 'value';
  }, 'x');
  assert.equal(result, 'value');
  assert.equal(calls, 1);
  const p = Promise.resolve(1);
  assert.equal(app.Query.run(() => p, 'x'), p, 'the very promise fn returned');
  // A token from a disabled begin ends nothing, even once a session listens.
  const { events } = await recordSession(t, 'Test.Spans', async () => {
    app.Query.end(0, 1, false, '');
    app.Query.fail(0, new Error('x'));
  });
  assert.equal(events.length, 0);
});

test('counters: set and add record the value after each change; the value is kept while no session listens', async (t) => {
  app.Inflight.set(3);
  app.Inflight.add(2); // no session: kept, not recorded
  const { events } = await recordSession(t, 'Test.Spans', async () => {
    app.Inflight.add(1);
    app.Inflight.add(-4);
    app.Inflight.set(10);
    app.Plain.add(0.5);
  });
  const values = events.filter((e) => e.name === 'Inflight.Counter').map((e) => e.fields.requests);
  assert.deepEqual(values, [6, 2, 10]);
  assert.deepEqual(eventRole(events.find((e) => e.name === 'Inflight.Counter')), { kind: 'counter', counter: 'Inflight', unit: 'requests' });
  assert.deepEqual({ ...events.find((e) => e.name === 'Plain.Counter').fields }, { value: 0.5 });
});

test('a counter given a non-number records nothing, keeps its value and counts the attempt as dropped (invalid-argument)', async (t) => {
  const file = join(await tempDir(t), 'counter.tptrace');
  const c = defineProvider('Test.BadCounter', { counters: { N: { id: 1 } } });
  const session = await startSession({ providers: 'Test.BadCounter', output: file });
  c.N.set(1);
  c.N.add('2');
  c.N.set(undefined);
  c.N.add(1);
  await session.stop();
  const values = [];
  for await (const e of readTrace(file)) values.push(e.fields.value);
  assert.deepEqual(values, [1, 2]);
  assert.equal((await readTrace(file).summary()).dropReasons['invalid-argument'], 2);
});

test('span and counter types are ordinary event types that say what they are', () => {
  const [begin, end] = [app.Query.beginType, app.Query.endType];
  assert.equal(begin.name, 'Query.Begin');
  assert.deepEqual(begin.fields.slice(0, 3), [['spanId', 'u64'], ['parentSpanId', 'u64'], ['sql', 'string']]);
  assert.deepEqual(end.fields.slice(0, 4), [['spanId', 'u64'], ['error', 'bool'], ['errorName', 'string'], ['rows', 'u32']]);
  assert.deepEqual(typeRole(begin), { kind: 'span-begin', span: 'Query' });
  assert.deepEqual(typeRole(end), { kind: 'span-end', span: 'Query' });
  assert.deepEqual(typeRole(app.Inflight.type), { kind: 'counter', counter: 'Inflight', unit: 'requests' });
  assert.equal(typeRole(app.Note), undefined);
  assert.ok(app.events.includes(begin) && app.events.includes(end) && app.events.includes(app.Inflight.type));
  assert.deepEqual(app.spans.map((s) => s.name), ['Request', 'Query']);
  assert.deepEqual(app.counters.map((s) => s.name), ['Inflight', 'Plain']);
});

test('bad span and counter definitions fail with a clear message', () => {
  const cases = [
    [{ events: { 'Phase.End': { id: 1 } } }, /may not end in \.Begin, \.End or \.Counter/],
    [{ spans: { S: { id: 1, fields: [['spanId', 'u64']] } } }, /may not declare field 'spanId'/],
    [{ spans: { S: { id: 1, endFields: [['error', 'string']] } } }, /may not declare field 'error'/],
    [{ events: { A: { id: 1 } }, spans: { A: { id: 2 } } }, /'A' is defined twice/],
    [{ events: { A: { id: 1 } }, counters: { B: { id: 1 } } }, /counter id 1 is used by both 'A' and 'B'/],
    [{ counters: { C: { id: 1, unit: '' } } }, /needs a non-empty unit/],
    [{ spans: { S: { id: 1, endFields: [['x', 'u128']] } } }, /bad field/],
    [{ spans: { spans: { id: 1 } } }, /clashes with a provider member/],
    [{ events: { E: { id: 1, replacedBy: 'Nope' } }, spans: { S: { id: 2 } } }, /'Bad.Span\d+\/E' is replacedBy 'Nope', which is no span of the provider/],
  ];
  cases.forEach(([def, pattern], k) => assert.throws(() => defineProvider(`Bad.Span${k}`, def), (e) => e.message.startsWith('tracepipe: ') && pattern.test(e.message), String(pattern)));
});

test('an event replacedBy a span: a session that records the span does not get the event as well, one that does not record it does', async (t) => {
  const p = defineProvider('Test.Replaced', {
    keywords: { done: 0x1n, spans: 0x2n },
    events: { Done: { id: 1, keywords: ['done'], fields: [['n', 'u32']], replacedBy: 'Work' } },
    spans: { Work: { id: 2, keywords: ['spans'], fields: [['n', 'u32']] } },
  });
  const dir = await tempDir(t);
  const names = async (file) => {
    const seen = [];
    for await (const e of readTrace(file)) if (e.provider === 'Test.Replaced') seen.push(e.name);
    return seen;
  };
  const both = await startSession({ providers: 'Test.Replaced', output: join(dir, 'both.tptrace') });
  const doneOnly = await startSession({ providers: 'Test.Replaced:0x1', output: join(dir, 'done.tptrace') });
  const id = p.Work.begin(7);
  p.Work.end(id);
  p.Done.write(7);
  await doneOnly.stop();
  assert.equal(p.Done.enabled, false, 'with only the session that records the span left, the event is off');
  p.Done.write(8);
  await both.stop();
  assert.deepEqual(await names(join(dir, 'both.tptrace')), ['Work.Begin', 'Work.End']);
  assert.deepEqual(await names(join(dir, 'done.tptrace')), ['Done']);
});

test('a span whose end never comes (a crash, a promise that never settles) is in the trace and reported as unfinished', { timeout: 60_000 }, async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'crash.tptrace');
  const script = join(dir, 'crash.mjs');
  const { writeFileSync } = await import('node:fs');
  writeFileSync(
    script,
    `import { defineProvider } from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)};
const p = defineProvider('Test.Crash', { spans: { Job: { id: 1, fields: [['what', 'string']] } } });
await p.Job.run(() => 1, 'finished');
p.Job.run(() => new Promise(() => {}), 'lost promise');
p.Job.run(() => { setTimeout(() => { throw new Error('crash'); }, 5); }, 'crash');
await p.Job.run(() => new Promise((r) => setTimeout(r, 50)), 'cut short by the crash');
`,
  );
  const child = spawnSync(process.execPath, ['--import', REGISTER, script], {
    env: { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: 'Test.Crash', TRACEPIPE_OUTPUT: file },
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.notEqual(child.status, 0, 'the child crashed');
  assert.match(child.stderr, /Error: crash/);
  const events = [];
  for await (const e of readTrace(file)) events.push(e);
  const begun = events.filter((e) => e.name === 'Job.Begin').map((e) => e.fields.what);
  assert.deepEqual(begun, ['finished', 'lost promise', 'crash', 'cut short by the crash']);
  const report = spawnSync(process.execPath, [CLI, 'report', file, '--json'], { encoding: 'utf8' });
  assert.equal(report.status, 0, report.stderr);
  const spans = JSON.parse(report.stdout).spans;
  // 'crash' ended (its function returned before the timer fired); the other two never did.
  assert.equal(spans.finished, 2);
  assert.equal(spans.unfinished, 2);
  assert.deepEqual(spans.oldestUnfinished.map((u) => u.span), ['Test.Crash/Job', 'Test.Crash/Job']);
  const text = spawnSync(process.execPath, [CLI, 'report', file], { encoding: 'utf8' }).stdout;
  assert.match(text, /spans: 2 finished, 2 unfinished/);
  assert.match(text, /unfinished when the trace ended \(oldest 2\):/);
});

test('report: count, total and self time per span name (children on other branches do not count twice)', async (t) => {
  const p = defineProvider('Test.SelfTime', { spans: { Outer: { id: 1 }, Inner: { id: 2 } } });
  const { file } = await recordSession(t, 'Test.SelfTime', async () => {
    await p.Outer.run(async () => {
      // Two overlapping children: the outer span's self time excludes their union, once.
      await Promise.all([p.Inner.run(() => sleep(30)), p.Inner.run(() => sleep(30))]);
    });
  });
  const report = spawnSync(process.execPath, [CLI, 'report', file, '--json'], { encoding: 'utf8' });
  const s = JSON.parse(report.stdout).spans;
  const by = Object.fromEntries(s.byName.map((x) => [x.span, x]));
  const outer = by['Test.SelfTime/Outer'];
  const inner = by['Test.SelfTime/Inner'];
  assert.equal(outer.count, 1);
  assert.equal(inner.count, 2);
  assert.equal(inner.selfMs, inner.totalMs, 'leaves: all self');
  // The union of the children is at least the longer child and less than their sum.
  assert.ok(outer.selfMs <= outer.totalMs - inner.maxMs + 1e-9, `${outer.selfMs} <= ${outer.totalMs} - ${inner.maxMs}`);
  assert.ok(outer.selfMs > outer.totalMs - inner.totalMs, 'overlapping children are not subtracted twice');
  assert.deepEqual(s.topByCount[0], 'Test.SelfTime/Inner');
  assert.equal(s.unfinished, 0);
});

test('spans in a worker thread: ids unique across threads, parents from that thread’s own context', { timeout: 30_000 }, async (t) => {
  const { Worker } = await import('node:worker_threads');
  const { events } = await recordSession(t, 'Test.Spans', async () => {
    await app.Request.run(async () => {
      const worker = new Worker(
        `import { defineProvider } from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)};
import { parentPort } from 'node:worker_threads';
const p = defineProvider('Test.Spans', { spans: { Request: { id: 10, fields: [['route', 'string']], endFields: [['status', 'u16']] }, Query: { id: 11, fields: [['sql', 'string']], endFields: [['rows', 'u32'], ['cached', 'bool'], ['note', 'string']] } } });
await p.Request.run(async () => { await new Promise((r) => setTimeout(r, 1)); p.Query.run(() => 0, 'in worker'); }, 'worker');
parentPort.postMessage('done');`,
        { eval: true, type: 'module' },
      );
      await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
      await worker.terminate();
      app.Query.run(() => 0, 'in main');
    }, 'main');
  });
  const spans = pairs(events);
  const byName = (v) => [...spans.values()].find((s) => s.begin.fields.sql === v || s.begin.fields.route === v);
  const [main, worker, inWorker, inMain] = ['main', 'worker', 'in worker', 'in main'].map(byName);
  assert.notEqual(worker.begin.threadId, main.begin.threadId);
  assert.equal(worker.begin.fields.parentSpanId, 0n, 'async context does not cross threads');
  assert.equal(inWorker.begin.fields.parentSpanId, worker.begin.fields.spanId);
  assert.equal(inMain.begin.fields.parentSpanId, main.begin.fields.spanId);
  assert.equal(worker.begin.fields.spanId >> 36n, BigInt(worker.begin.threadId), 'the worker’s ids carry its thread id');
});
