// `tracepipe explain` on a real framework server from npm (fastify), traced by the startup session
// with Node.Channels spans and the runtime providers, whose requests are slow for reasons chosen at
// random with a fixed seed: a forced major GC, a synchronous hot function, an awaited slow fetch of a
// local downstream server (in this process, untraced), and queueing behind a concurrent slow request
// for the server's one lock. Each handler times its own cause. explain must list exactly the slow
// requests, name the right cause for every one, and its shares must agree with the handlers' own
// timing within a few percentage points (the median; any one within WORST); with Runtime.CpuSampler
// it names the hot function, without it it says that CPU attribution needs the sampler and still
// explains the rest.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { seededRandom } from './helpers/seeded-random.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const REGISTER = new URL('../dist/register.js', import.meta.url).href;
const FIXTURE = fileURLToPath(new URL('./fixtures/explain-server.mjs', import.meta.url));
const SEED = 23;
const REQUESTS = 12;
const REASONS = ['gc', 'hot', 'fetch', 'queue', 'fast'];
/** Objects the server retains, so that a forced major GC takes a few hundred ms. */
const BALLAST = 600_000;
const SLOW_MS = 500;
/**
 * How far explain's share may lie from the share the handler timed, in percentage points: the median
 * over the slow requests, and any one of them (the providers' own timing slips on a loaded machine:
 * a stall's start is estimated from the loop's last beat, a pause's callbacks may miss part of gc()).
 */
const TOLERANCE = 5;
const WORST = 15;
const WAIT_MS = 60_000;
const SPAN = 'Node.Channels/HttpServer';
/** The cause explain must name for each reason. */
const CAUSE = { gc: 'gc', hot: 'stall', fetch: 'children', hold: 'children', queue: 'queued' };

const bounded = (promise, what, ms = WAIT_MS) => {
  let timer;
  return Promise.race([promise, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)))]).finally(() => clearTimeout(timer));
};

/** The downstream server: answers /slow?ms=N&id=K after N ms; `seen(id)` resolves once request K arrived. */
async function downstream(t) {
  const arrived = new Map();
  const waiter = (id) => {
    if (!arrived.has(id)) {
      let resolve;
      arrived.set(id, { promise: new Promise((r) => (resolve = r)), resolve });
    }
    return arrived.get(id);
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    waiter(url.searchParams.get('id')).resolve();
    setTimeout(() => res.end('done'), Number(url.searchParams.get('ms')));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  return { url: `http://127.0.0.1:${server.address().port}`, seen: (id) => waiter(String(id)).promise };
}

/** Runs the traced server, sends the requests in turn ('queue': a 'hold' and, once it holds the lock, a 'queue'), and returns what each handler timed. */
async function traceRequests(t, providers) {
  const dir = await tempDir(t);
  const file = join(dir, 'server.tptrace');
  const down = await downstream(t);
  const child = spawn(process.execPath, ['--expose-gc', `--import=${REGISTER}`, FIXTURE, 'serve', down.url, String(BALLAST)], {
    env: { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: file, TRACEPIPE_PROVIDERS: providers },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  t.after(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const ready = await bounded(lines.next(), 'the server to start');
  assert.match(ready.value ?? '', /^ready \d+$/);
  const base = `http://127.0.0.1:${ready.value.split(' ')[1]}`;
  const get = (id, reason, ms = 0) => fetch(`${base}/work?id=${id}&reason=${reason}&ms=${ms}`).then((r) => r.json());

  const rnd = seededRandom(SEED);
  const reasons = Array.from({ length: REQUESTS }, () => REASONS[Math.floor(rnd() * REASONS.length)]);
  assert.deepEqual([...new Set(reasons)].sort(), [...REASONS].sort(), `seed ${SEED} picks every reason`);
  const answers = [];
  let id = 0;
  for (const reason of reasons) {
    if (reason === 'queue') {
      const holder = get(++id, 'hold', SLOW_MS);
      await bounded(down.seen(id), 'the hold request to take the lock');
      answers.push(...(await bounded(Promise.all([holder, get(++id, 'queue')]), 'the hold and queue requests')));
    } else answers.push(await bounded(get(++id, reason, SLOW_MS), `request ${id} (${reason})`));
  }
  child.stdin.end();
  const [code] = await bounded(once(child, 'close'), 'the server to exit');
  assert.equal(code, 0);
  return { file, answers };
}

async function explain(file, args) {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'explain', file, ...args], { maxBuffer: 64 << 20 });
  return stdout;
}

/** The request an item is, by the id in its url. */
const requestId = (item) => item.label.match(/[?&]id=(\d+)/)?.[1];

function checkVerdicts(t, report, answers, { sampled }) {
  const slow = answers.filter((a) => a.reason !== 'fast');
  const listed = report.spans.slowest;
  const deviations = [];
  assert.deepEqual(listed.map(requestId).sort(), slow.map((a) => a.id).sort(), 'explain lists exactly the slow requests');
  for (const item of listed) {
    const answer = answers.find((a) => a.id === requestId(item));
    const why = `request ${answer.id} (${answer.reason}, ${answer.causeMs.toFixed(1)} ms of ${item.durationMs.toFixed(1)} ms): ${item.verdict.text}`;
    assert.equal(item.verdict.cause, CAUSE[answer.reason], why);
    // The cause takes the time the handler timed, but for what a cause before it in the precedence
    // took of it (a GC pause or a stall while a fetch was awaited, the other requests' CPU while a
    // request queued): its share is at most what was timed, and with those causes at least that.
    const cause = CAUSE[answer.reason];
    const percent = (c) => item.shares.find((s) => s.cause === c)?.percent ?? 0;
    const share = percent(cause);
    const withBefore = report.precedence.slice(0, report.precedence.indexOf(cause) + 1).reduce((n, c) => n + percent(c), 0);
    const known = (100 * answer.causeMs) / item.durationMs;
    const shares = item.shares.map((s) => `${s.cause} ${s.percent.toFixed(1)} %`).join(', ');
    const deviation = Math.max(0, share - known, known - withBefore);
    deviations.push(deviation);
    t.diagnostic(`${why}: ${shares}; ${known.toFixed(1)} % timed by the handler`);
    assert.ok(deviation <= WORST, `${why}: ${shares}, against ${known.toFixed(1)} % timed by the handler`);
    assert.equal(item.shares.reduce((n, s) => n + s.ns, 0), item.endNs - item.startNs, `${why}: the shares add up to the interval`);
    switch (answer.reason) {
      case 'gc':
        assert.equal(item.gc.longestKind, 'mark-compact', why);
        break;
      case 'hot':
        if (sampled) assert.match(item.verdict.text, /on CPU in `burnCpu /, why);
        else assert.match(item.verdict.text, /CPU attribution needs Runtime\.CpuSampler/, why);
        break;
      case 'fetch':
      case 'hold':
        assert.equal(item.children.top[0].span, 'Node.Channels/Fetch', why);
        assert.match(item.children.top[0].label, new RegExp(`/slow\\?ms=${SLOW_MS}&id=${answer.id}$`), why);
        break;
      case 'queue': {
        const holder = answers[answers.indexOf(answer) - 1];
        assert.equal(holder.reason, 'hold');
        assert.equal(requestId(item.concurrency.longestBefore), holder.id, why);
        break;
      }
    }
  }
  assert.equal(report.sampler.present, sampled);
  deviations.sort((a, b) => a - b);
  const median = deviations[deviations.length >> 1];
  assert.ok(median <= TOLERANCE, `the shares lie ${median.toFixed(1)} percentage points (median) from what the handlers timed: ${deviations.map((d) => d.toFixed(1)).join(', ')}`);
}

test('explain names the cause of every slow request of a fastify server, CPU samples included', { timeout: 240_000 }, async (t) => {
  const { file, answers } = await traceRequests(t, `Runtime.GC,Runtime.EventLoop,Node.Channels:0x10,Runtime.CpuSampler`);
  const slow = answers.filter((a) => a.reason !== 'fast').length;
  const report = JSON.parse(await explain(file, ['--span', SPAN, '--top', String(slow), '--json']));
  checkVerdicts(t, report, answers, { sampled: true });
  // Every stall is explained too: the top function of each hot request's stall is the hot function.
  for (const item of report.spans.slowest.filter((x) => answers.find((a) => a.id === requestId(x)).reason === 'hot')) {
    const stall = report.stalls.items.find((s) => s.startNs < item.endNs && s.endNs > item.startNs);
    assert.match(stall?.cpu.functions[0]?.function ?? '', /^burnCpu /, `the stall of request ${requestId(item)}: ${stall?.verdict.text}`);
  }
});

test('without Runtime.CpuSampler explain still names GC, stalls, children and queueing, and says what CPU attribution needs', { timeout: 240_000 }, async (t) => {
  const { file, answers } = await traceRequests(t, 'Runtime.GC,Runtime.EventLoop,Node.Channels:0x10');
  const slow = answers.filter((a) => a.reason !== 'fast').length;
  const report = JSON.parse(await explain(file, ['--span', SPAN, '--top', String(slow), '--json']));
  checkVerdicts(t, report, answers, { sampled: false });
  assert.match(report.sampler.note, /CPU attribution needs Runtime\.CpuSampler/);
  const text = await explain(file, ['--span', SPAN, '--top', String(slow)]);
  assert.match(text, /CPU samples {2}none: CPU attribution needs Runtime\.CpuSampler/);
  for (const a of answers.filter((x) => x.reason !== 'fast')) assert.match(text, new RegExp(`GET /work\\?id=${a.id}&`));
});
