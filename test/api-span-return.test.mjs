// Issue 21, item 8: span.run(fn) returns exactly what fn returned, tracing on or off, in tracepipe and
// tracepipe/lite alike: a lazy thenable (a query builder) is neither run nor replaced, a promise is
// the same promise, and a rejection nobody handles stays unhandled (and one handled stays handled).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineProvider, eventRole, readTrace } from '../dist/index.js';
import { defineProvider as defineLiteProvider } from '../dist/api/lite.js';
import { recordSession } from './helpers/record-session.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const APP = fileURLToPath(new URL('./fixtures/span-rejection-app.mjs', import.meta.url));
const REGISTER = fileURLToPath(new URL('../dist/register.js', import.meta.url));

const full = defineProvider('Test.SpanReturn', { events: { Mark: { id: 1, fields: [['at', 'string']] } }, spans: { Work: { id: 10, fields: [['what', 'string']] } } });
const lite = defineLiteProvider('Test.SpanReturnLite', { spans: { Work: { id: 10, fields: [['what', 'string']] } } });

/** A lazy thenable like Knex's and Mongoose's query builders: it runs only when then is called. */
class QueryBuilder {
  runs = 0;
  clauses = [];
  where(c) {
    this.clauses.push(c);
    return this;
  }
  then(ok, fail) {
    this.runs++;
    return Promise.resolve(this.clauses.length).then(ok, fail);
  }
}

/** Each kind of value fn can return; `fresh()` makes a new one for each run. */
const VALUES = {
  undefined: () => undefined,
  number: () => 42,
  string: () => 'text',
  object: () => ({ a: 1 }),
  function: () => () => 1,
  'lazy thenable': () => new QueryBuilder(),
  'pending promise': () => new Promise((r) => setTimeout(r, 5, 'later')),
  'fulfilled promise': () => Promise.resolve(1),
  'handled rejected promise': () => {
    const p = Promise.reject(new Error('handled'));
    p.catch(() => {});
    return p;
  },
  'promise subclass with its own then': () => {
    class Tracked extends Promise {
      then(...a) {
        this.thens = (this.thens ?? 0) + 1;
        return super.then(...a);
      }
    }
    return Tracked.resolve(2);
  },
  'promise decorated with methods (like execa)': () => Object.assign(new Promise((r) => setImmediate(r)), { kill() {} }),
};

const withSession = async (t, providers, body) => (await recordSession(t, providers, body)).events;

async function identities(span) {
  for (const [kind, make] of Object.entries(VALUES)) {
    const v = make();
    assert.equal(span.run(() => v, kind), v, `${kind}: run returns what fn returned`);
    if (v instanceof QueryBuilder) assert.equal(v.runs, 0, 'the query builder did not run');
    if (v?.thens !== undefined) assert.fail('then of the promise subclass was called');
    const thrown = new Error(kind);
    assert.throws(() => span.run(() => {
      throw thrown;
    }, kind), (e) => e === thrown, 'the very error fn threw');
  }
  await new Promise((r) => setTimeout(r, 20));
}

for (const [api, span] of [['tracepipe', full.Work], ['tracepipe/lite', lite.Work]]) {
  test(`${api}: run returns exactly what fn returned (values, lazy thenables, promises) and rethrows the same error, off and on`, async (t) => {
    assert.equal(span.enabled, false);
    await identities(span);
    const events = await withSession(t, 'Test.SpanReturn,Test.SpanReturnLite', async () => {
      assert.equal(span.enabled, true);
      await identities(span);
    });
    const ends = events.filter((e) => eventRole(e)?.kind === 'span-end');
    assert.equal(ends.length, 2 * Object.keys(VALUES).length, 'every span ended');
  });
}

test('a lazy query builder keeps its methods and runs once, when the caller awaits it', async (t) => {
  await withSession(t, 'Test.SpanReturn', async () => {
    const q = full.Work.run(() => new QueryBuilder().where('a'), 'builder');
    assert.equal(q.where('b'), q, 'q.where is still a method of the builder');
    assert.equal(q.runs, 0);
    assert.equal(await q, 2);
    assert.equal(q.runs, 1);
  });
});

test('a real knex query builder comes back from run untouched: not executed, still chainable', async (t) => {
  const knex = createRequire(import.meta.url)('knex')({ client: 'pg' });
  t.after(() => knex.destroy());
  let acquired = 0;
  const acquire = knex.client.acquireConnection;
  knex.client.acquireConnection = function (...a) {
    acquired++;
    return acquire.apply(this, a);
  };
  await withSession(t, 'Test.SpanReturn', async () => {
    const q = full.Work.run(() => knex('users').where('id', 1), 'knex');
    assert.equal(typeof q.where, 'function', 'q.where is a function');
    assert.equal(q.where('active', true).toString(), 'select * from "users" where "id" = 1 and "active" = true');
    // Give an eager then every chance to have run the query.
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(acquired, 0, 'the query was not executed');
  });
});

test('a span whose fn returns a native promise ends when it settles, an error end if it rejects; nested runs of one promise both end', async (t) => {
  class DbError extends Error {
    name = 'DbError';
  }
  const events = await withSession(t, 'Test.SpanReturn', async () => {
    let release;
    const slow = new Promise((r) => (release = r));
    const p = full.Work.run(() => slow, 'slow');
    await new Promise((r) => setTimeout(r, 5));
    full.Mark.write('before-settle');
    release(1);
    await p;
    const nested = new Promise((r) => setTimeout(r, 5));
    assert.equal(full.Work.run(() => full.Work.run(() => nested, 'inner'), 'outer'), nested);
    await nested;
    await assert.rejects(full.Work.run(async () => {
      await null;
      throw new DbError('x');
    }, 'rejects'), DbError);
    full.Work.run(() => Promise.resolve(3), 'settled already');
    await new Promise((r) => setImmediate(r));
  });
  const byId = new Map();
  const order = [];
  for (const e of events) {
    const role = eventRole(e);
    if (role?.kind === 'span-begin') byId.set(e.fields.spanId, e.fields.what);
    if (role?.kind === 'span-end') order.push([byId.get(e.fields.spanId), e.fields.error, e.fields.errorName]);
    if (e.name === 'Mark') order.push(['mark']);
  }
  assert.deepEqual(order, [['mark'], ['slow', false, ''], ['inner', false, ''], ['outer', false, ''], ['rejects', true, 'DbError'], ['settled already', false, '']]);
});

/** Runs the fixture app; resolves with its exit code and stderr (stack frames and pids removed: tracepipe's run is on the stack when traced). */
function runApp(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (s) => (out += s));
    child.stderr.setEncoding('utf8').on('data', (s) => (err += s));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const stderr = err.split('\n').filter((l) => !/^\s+at /.test(l)).join('\n').replace(/\(node:\d+\)/g, '(node:PID)').replace(/^.*span-rejection-app\.mjs:\d+$/m, 'SOURCE');
      resolve({ code, signal, stdout: out, stderr });
    });
  });
}

const SCENARIOS = ['unhandled', 'unhandled-sync-rejected', 'handled-same-tick', 'awaited', 'handled-later', 'listener'];

test('rejections behave the same traced and untraced: exit code, stdout and stderr, in tracepipe and lite, with and without the native addon', { timeout: 240_000 }, async (t) => {
  const dir = await tempDir(t);
  const cases = [];
  for (const scenario of SCENARIOS) {
    for (const api of ['tracepipe', 'lite']) {
      for (const addon of api === 'tracepipe' ? ['1', '0'] : ['1']) {
        const flags = scenario === 'handled-later' ? ['--unhandled-rejections=warn'] : [];
        const file = join(dir, `${scenario}-${api}-${addon}.tptrace`);
        cases.push(async () => {
          const base = { TRACEPIPE_GC_HOOK: addon };
          const off = await runApp([...flags, APP, scenario, api], base);
          const on = await runApp([...flags, `--import=${REGISTER}`, APP, scenario, api], { ...base, TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: 'Test.Rejection', TRACEPIPE_OUTPUT: file });
          return { scenario, api, addon, file, off, on };
        });
      }
    }
  }
  // Two at a time: each case is two short processes.
  const results = [];
  for (let i = 0; i < cases.length; i += 2) results.push(...(await Promise.all(cases.slice(i, i + 2).map((c) => c()))));
  for (const { scenario, api, addon, file, off, on } of results) {
    const label = `${scenario} (${api}, addon ${addon})`;
    assert.deepEqual({ code: on.code, signal: on.signal, stdout: on.stdout, stderr: on.stderr }, { code: off.code, signal: off.signal, stdout: off.stdout, stderr: off.stderr }, label);
    const crashes = scenario.startsWith('unhandled');
    assert.equal(off.code, crashes ? 1 : 0, `${label}: untraced exit code`);
    if (scenario === 'listener') assert.match(on.stdout, /the promise run returned: true/, label);
    // The span ended, an error end, even in a process that dies of the rejection (with the addon).
    const ends = [];
    for await (const e of readTrace(file)) if (eventRole(e)?.kind === 'span-end') ends.push([e.fields.error, e.fields.errorName]);
    const expected = addon === '0' ? [false, 'unwatched-promise'] : [true, scenario === 'unhandled-sync-rejected' ? 'RangeError' : 'TypeError'];
    assert.deepEqual(ends, [expected], `${label}: the span's end`);
  }
});
