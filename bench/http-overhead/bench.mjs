// What tracing an HTTP server costs, measured the way users compare tracers: the servers and all their
// threads pinned to CPU 0, the load generator (autocannon, its own process) pinned to CPU 1, so the
// scheduler does not trade one for the other; server CPU per request (process.cpuUsage(), every
// thread) is the headline, req/s and p99 latency beside it. Variants, in the same run: tracing off;
// Node's hooks alone (the floor under any GC and http tracer); tracepipe's Node.Channels; tracepipe's
// Runtime.* + Node.Channels (both startup sessions to a file, configured by environment variables, as
// a user enables them); OpenTelemetry's HTTP auto-instrumentation exporting every span.
// Every round starts a fresh server per variant (one process's code and heap layout moves its
// throughput for its whole life); each gets its measured seconds in short slices, the variants taking
// turns in a new seeded order each slice, because the machine's own speed drifts over seconds by more than the
// differences measured (whole 3 s runs one after the other differed by ±10 %). Only the server being
// measured gets load. Run alone: `node bench/run.mjs http-overhead`.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pinning } from '../support/pinning.mjs';
import { median, medianInterval } from '../support/stats.mjs';

// BENCH_HTTP_ROUNDS: more rounds narrow the median where single rounds differ by ±10 % (a shared machine).
const ROUNDS = Number(process.env.BENCH_HTTP_ROUNDS ?? 8);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`BENCH_HTTP_ROUNDS must be a whole number of rounds, not '${process.env.BENCH_HTTP_ROUNDS}'`);
const WARMUP_S = 1;
const MEASURED_S = 3;
/** The measured seconds of each variant come in this many slices, variants taking turns. */
const SLICES = 6;
const SETTLE_MS = 250;
const CONNECTIONS = 10;
const TIMEOUT_S = 60;
const TARGET_REQ_PERCENT = 5;
const TARGET_CPU_SHARE = 15;
const RUNTIME = 'Runtime.GC,Runtime.GCHeap,Runtime.EventLoop,Runtime.Process';
const HTTP_EVENT = 'Node.Channels/HttpServerRequest';

const SERVER = fileURLToPath(new URL('./server.mjs', import.meta.url));
const LOAD = fileURLToPath(new URL('./load.mjs', import.meta.url));
const REGISTER = new URL('../../dist/register.js', import.meta.url).href;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const OFF = 0;
const CHANNELS = 2;
const FULL = 3;
const OTEL = 4;
const VARIANTS = [
  { name: 'off', server: 'plain' },
  { name: "Node's hooks only (no tracer)", server: 'node-hooks' },
  // The http, undici and net events (0x7): request spans (0x8, 0x10) are measured by the spans benchmark.
  { name: 'tracepipe Node.Channels', server: 'plain', providers: 'Node.Channels:0x7' },
  { name: 'tracepipe Runtime.* + Node.Channels', server: 'plain', providers: `${RUNTIME},Node.Channels:0x7` },
  { name: 'OpenTelemetry http, BatchSpanProcessor', server: 'opentelemetry' },
];

export const description = 'issue 14: server CPU per request, req/s and p99 of a pinned HTTP server: tracepipe vs OpenTelemetry vs off';

function spawnPinned(prefix, args, options) {
  const argv = [...(prefix ?? []), process.execPath, ...args];
  return spawn(argv[0], argv.slice(1), { cwd: ROOT, ...options });
}

/** `promise`, or a clear error if `child` exits first or nothing comes within TIMEOUT_S. */
function bounded(child, what, promise) {
  return new Promise((resolve, reject) => {
    const onExit = (code, signal) => finish(reject, new Error(`${what}: the process exited (${signal ?? code}) first`));
    const timer = setTimeout(() => finish(reject, new Error(`${what}: nothing after ${TIMEOUT_S} s`)), TIMEOUT_S * 1000);
    function finish(settle, value) {
      clearTimeout(timer);
      child.off('exit', onExit);
      settle(value);
    }
    child.once('exit', onExit);
    promise.then((v) => finish(resolve, v), (e) => finish(reject, e));
  });
}

function exited(child, what) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  let timer;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: still running after ${TIMEOUT_S} s`)), TIMEOUT_S * 1000)));
  return Promise.race([once(child, 'exit'), late]).finally(() => clearTimeout(timer));
}

const alive = (child) => child.exitCode === null && child.signalCode === null;

/** The load generator: `run(url, seconds)` is one autocannon run. */
function startLoader(pin) {
  const child = spawnPinned(pin.load, [LOAD], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async run(url, seconds) {
      child.stdin.write(`${JSON.stringify({ url, seconds, connections: CONNECTIONS })}\n`);
      const { value, done } = await bounded(child, `load of ${url}`, lines.next());
      if (done) throw new Error(`load of ${url}: no result`);
      return JSON.parse(value);
    },
    async close() {
      child.stdin.end();
      await exited(child, 'the load generator');
    },
    kill: () => alive(child) && child.kill('SIGKILL'),
  };
}

/** A fresh server of `variant`; `stop()` says what it served and what its tracer recorded. */
async function startServer(variant, traceFile, pin) {
  const env = variant.providers ? { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: traceFile, TRACEPIPE_PROVIDERS: variant.providers } : process.env;
  const nodeArgs = variant.providers ? [`--import=${REGISTER}`] : [];
  const child = spawnPinned(pin.server, [...nodeArgs, SERVER, variant.server], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const reply = (what) => bounded(child, `${variant.name} server, ${what}`, once(child, 'message').then(([m]) => m));
  const ask = (what) => {
    child.send(what);
    return reply(`'${what}'`);
  };
  const server = { child, url: '', ask };
  server.url = `http://127.0.0.1:${(await reply('start')).port}/api/items`;
  server.stop = async () => {
    const { served, spans } = await ask('stop');
    await exited(child, `${variant.name} server`);
    if (!variant.providers) return { served, spans };
    const { readTrace } = await import('../../dist/index.js');
    const s = await readTrace(traceFile).summary();
    if (!s.complete) throw new Error(`${traceFile}: incomplete trace (${s.error?.message})`);
    return { served, httpEvents: s.byEvent[HTTP_EVENT] ?? 0, events: s.events, dropped: s.dropped };
  };
  return server;
}

/** 0 … n-1 in an order drawn from `seed` (a Fisher–Yates shuffle driven by a 32-bit LCG). */
function shuffled(n, seed) {
  const order = Array.from({ length: n }, (_, i) => i);
  let x = (seed * 2654435761 + 1) >>> 0;
  for (let i = n - 1; i > 0; i--) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    const j = x % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/**
 * One round: a fresh server per variant, all started, each warmed up; then the measured load in
 * SLICES short slices per variant, taking turns in a new order each slice, so that a change in the
 * machine's speed (a neighbour, the host) lands on every variant alike instead of on whichever ran
 * in its seconds. Idle servers wait meanwhile; tracepipe's idle cost (BENCHMARKS.md §16) is ~0.2 % of a CPU.
 * Each slice's window ends a moment after its load does, so work a tracer defers (a drain pass, a
 * batch export) is counted where its requests are.
 */
async function measureRound(round, dir, pin, loader) {
  const servers = [];
  const files = VARIANTS.map((_, i) => join(dir, `http-${round}-${i}.tptrace`));
  // A fresh order for every slice (seeded: runs repeat), so no variant always follows the same one;
  // start-up and warm-up go in the first slice's order.
  // (Seeds keep their earlier stride, so the orders are those of the runs BENCHMARKS.md records.)
  const orders = Array.from({ length: SLICES }, (_, slice) => shuffled(VARIANTS.length, round * (SLICES + 1) + slice));
  const turn = (k, slice = 0) => orders[slice][k];
  try {
    for (let k = 0; k < VARIANTS.length; k++) servers[turn(k)] = await startServer(VARIANTS[turn(k)], files[turn(k)], pin);
    for (let k = 0; k < VARIANTS.length; k++) await loader.run(servers[turn(k)].url, WARMUP_S);
    await sleep(SETTLE_MS);
    const sums = VARIANTS.map(() => ({ cpuUs: 0, served: 0, requests: 0, seconds: 0, p99Ms: [] }));
    for (let slice = 0; slice < SLICES; slice++) {
      for (let k = 0; k < VARIANTS.length; k++) {
        const i = turn(k, slice);
        await servers[i].ask('mark');
        const load = await loader.run(servers[i].url, MEASURED_S / SLICES);
        await sleep(SETTLE_MS);
        const { cpuUs, served } = await servers[i].ask('measured');
        const sum = sums[i];
        sum.cpuUs += cpuUs;
        sum.served += served;
        sum.requests += load.requests;
        sum.seconds += load.seconds;
        sum.p99Ms.push(load.p99Ms);
      }
    }
    const results = [];
    for (const [i, sum] of sums.entries()) {
      results[i] = { cpuUsPerRequest: sum.cpuUs / sum.served, reqPerS: sum.requests / sum.seconds, p99Ms: median(sum.p99Ms), ...(await servers[i].stop()) };
    }
    return results;
  } finally {
    for (const server of servers) if (server && alive(server.child)) server.child.kill('SIGKILL');
    for (const f of files) rmSync(f, { force: true });
  }
}

// autocannon's latency histogram holds whole milliseconds: 0 means under 1 ms.
const p99Text = (ms) => (ms < 1 ? '<1 ms' : `${ms.toFixed(0)} ms`);
const pct = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}%`;
const us = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(2)} µs`;

export async function run() {
  const pin = pinning();
  if (pin.note) console.log(`  NOT PINNED: ${pin.note}; servers, load and tracing threads share the CPUs, so req/s mostly measures the scheduler`);
  console.log(
    `${ROUNDS} rounds; in each, a fresh server per variant, ${pin.note ? 'unpinned' : 'pinned to CPU 0 (taskset -c 0)'}, each warmed up for ${WARMUP_S} s, then ` +
      `${MEASURED_S} s of autocannon -c ${CONNECTIONS} (${pin.note ? 'unpinned' : 'pinned to CPU 1'}) in ${SLICES} slices of ${MEASURED_S / SLICES} s, variants taking turns in a new order each slice; server CPU from the start of each slice to ${SETTLE_MS} ms after its load`,
  );
  console.log(`  per round, req/s and server CPU per request of: ${VARIANTS.map((v) => v.name).join(' | ')}`);
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-http-bench-'));
  const loader = startLoader(pin);
  const results = VARIANTS.map(() => []);
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const [i, res] of (await measureRound(r, dir, pin, loader)).entries()) results[i].push(res);
      const line = VARIANTS.map((v, i) => `${results[i][r].reqPerS.toFixed(0)} req/s ${results[i][r].cpuUsPerRequest.toFixed(2)} µs`).join(' | ');
      console.log(`  round ${r + 1}  ${line}  (load average ${loadavg()[0].toFixed(2)})`);
    }
    await loader.close();
  } finally {
    loader.kill();
    rmSync(dir, { recursive: true, force: true });
  }

  // Per round, each variant against off in the same round; then the median over rounds.
  const perRound = (i, f) => results[i].map((res, k) => f(res, results[OFF][k]));
  const extraCpu = VARIANTS.map((_, i) => median(perRound(i, (res, off) => res.cpuUsPerRequest - off.cpuUsPerRequest)));
  const reqRatios = VARIANTS.map((_, i) => perRound(i, (res, off) => 100 * (res.reqPerS / off.reqPerS - 1)));
  const reqChange = reqRatios.map(median);
  // How far the median of the rounds could be from the median of many more (95 %, order statistics).
  const interval = (xs) => {
    const ci = medianInterval(xs);
    return ci ? `${pct(ci.low)}…${pct(ci.high)}` : 'too few rounds';
  };
  console.log(`\n  ${'variant'.padEnd(40)} ${'req/s'.padStart(7)} ${'vs off'.padStart(7)} ${'(95 % interval)'.padStart(17)} ${'p99'.padStart(7)}   ${'CPU/request'.padStart(11)} ${'extra vs off'.padStart(13)}`);
  for (const [i, v] of VARIANTS.entries()) {
    const med = (f) => median(results[i].map(f));
    const cols = [
      med((res) => res.reqPerS).toFixed(0).padStart(7),
      (i === OFF ? '' : pct(reqChange[i])).padStart(7),
      (i === OFF ? '' : interval(reqRatios[i])).padStart(17),
      p99Text(med((res) => res.p99Ms)).padStart(7),
      `${med((res) => res.cpuUsPerRequest).toFixed(2)} µs`.padStart(11),
      (i === OFF ? '' : us(extraCpu[i])).padStart(13),
    ];
    console.log(`  ${v.name.padEnd(40)} ${cols.join(' ')}`);
  }
  const onTop = results[FULL].map((res, k) => 100 * (res.reqPerS / results[CHANNELS][k].reqPerS - 1));
  console.log(`  Runtime.* on top of Node.Channels, the same rounds: req/s ${pct(median(onTop))} (95 % interval ${interval(onTop)})`);

  // Every request must have been recorded, or a tracer's cost would be understated.
  const total = (i, f) => results[i].reduce((a, res) => a + f(res), 0);
  const counts = [];
  for (const [i, v] of VARIANTS.entries()) {
    if (!v.providers) continue;
    const exact = results[i].every((res) => res.httpEvents === res.served && res.dropped === 0);
    console.log(`  ${v.name}: ${total(i, (res) => res.httpEvents)} ${HTTP_EVENT} events for ${total(i, (res) => res.served)} requests served; ${total(i, (res) => res.events)} events, ${total(i, (res) => res.dropped)} dropped`);
    counts.push({ check: `${v.name}: one ${HTTP_EVENT} per request served, none dropped`, value: exact ? 'exact' : 'not exact', target: 'exact in every round', met: exact });
  }
  const spansExact = results[OTEL].every((res) => res.spans === res.served);
  console.log(`  OpenTelemetry: ${total(OTEL, (res) => res.spans)} spans serialised for ${total(OTEL, (res) => res.served)} requests served`);
  counts.push({ check: 'OpenTelemetry: one span exported per request served', value: spansExact ? 'exact' : 'not exact', target: 'exact in every round', met: spansExact });

  const share = extraCpu[OTEL] / extraCpu[FULL];
  const overhead = -reqChange[FULL];
  const overheadCi = medianInterval(reqRatios[FULL].map((x) => -x));
  return [
    {
      check: 'extra server CPU per request, tracepipe Runtime.* + Node.Channels vs OpenTelemetry',
      value: `${us(extraCpu[FULL])} vs ${us(extraCpu[OTEL])} (${share > 0 ? `1/${share.toFixed(1)}` : 'no extra CPU measured'})`,
      target: `<= 1/${TARGET_CPU_SHARE}`,
      met: extraCpu[FULL] * TARGET_CPU_SHARE <= extraCpu[OTEL],
    },
    {
      check: `req/s overhead, tracepipe Runtime.* + Node.Channels${pin.note ? ' (NOT PINNED)' : ', pinned'}`,
      value: `${overhead.toFixed(1)}% (95 % interval ${overheadCi ? `${overheadCi.low.toFixed(1)}–${overheadCi.high.toFixed(1)}%` : 'needs 6 rounds'}; Node.Channels only ${(-reqChange[CHANNELS]).toFixed(1)}%, OpenTelemetry ${(-reqChange[OTEL]).toFixed(1)}%)`,
      target: `<= ${TARGET_REQ_PERCENT}%`,
      met: pin.note ? null : overhead <= TARGET_REQ_PERCENT,
    },
    ...counts,
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const c of await run()) console.log(`${c.met === null ? 'info' : c.met ? 'met' : 'MISSED'}: ${c.check}: ${c.value} (target ${c.target})`);
}
