// What tracing an HTTP server costs, measured the way users compare tracers: the servers and all their
// threads pinned to CPU 0, the load generator (autocannon, its own process) pinned to CPU 1, so the
// scheduler does not trade one for the other; server CPU per request (process.cpuUsage(), every
// thread) is the headline, req/s and p99 latency beside it. Variants, in the same run, each adding one
// part of the cost to the one before: tracing off; Node's hooks with empty handlers (the floor under any
// http tracer); tracepipe's request event alone; the request span's two events, current in the handler
// only (context=sync); the span kept current across await (Node.Channels as a user enables it);
// Runtime.* on top (all startup sessions to a file, configured by environment variables, as a user
// enables them); OpenTelemetry's HTTP auto-instrumentation exporting every span.
// Each Node.js found is measured in the same rounds: this one, and those BENCH_NODES names
// (`BENCH_NODES=/path/to/node24=/path/to/tree24,...`: a Node binary, and a checkout of this code whose
// native addon was built for it; without `=tree`, this checkout, if its addon loads there).
// Every round starts a fresh server per variant (one process's code and heap layout moves its
// throughput for its whole life); each gets its measured seconds in short slices, the variants taking
// turns in a new seeded order each slice, because the machine's own speed drifts over seconds by more than the
// differences measured (whole 3 s runs one after the other differed by ±10 %). Only the server being
// measured gets load. CPU per request means what the parts need only if the server was saturated:
// each variant's line says how much of the load's time its event loop was on its CPU and waiting for
// it, and a check warns when the untraced server was not (BENCH_HTTP_PIPELINING and
// BENCH_HTTP_CONNECTIONS set the load). Run alone: `node bench/run.mjs http-overhead`.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pinning } from '../support/pinning.mjs';
import { median, medianInterval } from '../support/stats.mjs';

// BENCH_HTTP_ROUNDS: more rounds narrow the median where single rounds differ by ±10 % (a shared machine).
const ROUNDS = wholeFromEnv('BENCH_HTTP_ROUNDS', 8);

/** A positive whole number from the environment variable `name`, else `fallback`; anything else stops the bench. */
function wholeFromEnv(name, fallback) {
  const text = process.env[name];
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || text.trim() === '') throw new Error(`${name} must be a whole number of at least 1, not '${text}'`);
  return n;
}
const WARMUP_S = 1;
const MEASURED_S = 3;
/** The measured seconds of each variant come in this many slices, variants taking turns. */
const SLICES = 6;
const SETTLE_MS = 250;
/**
 * The load: autocannon's connections and requests in flight per connection. What the parts measure
 * depends on the server being saturated: on a machine where waking a process is slow, 10 connections
 * one request at a time leave the server waiting on the round trip, and its CPU per request then
 * counts its idle and wake-up costs. More in flight (pipelining) keeps it busy (BENCHMARKS.md §6).
 */
const CONNECTIONS = wholeFromEnv('BENCH_HTTP_CONNECTIONS', 10);
const PIPELINING = wholeFromEnv('BENCH_HTTP_PIPELINING', 1);
/** Below this share of its CPU busy under load, the server was not saturated: the run measured a latency-bound regime. */
const SATURATED = 0.9;
const TIMEOUT_S = 60;
const TARGET_REQ_PERCENT = 5;
const TARGET_CPU_SHARE = 15;
const TARGET_OTEL_RATIO = 15;
const TARGET_EVENT_US = 1;
const TARGET_INTERVAL = 0.25;
const RUNTIME = 'Runtime.GC,Runtime.GCHeap,Runtime.EventLoop,Runtime.Process';
const HTTP_EVENT = 'Node.Channels/HttpServerRequest';

const SERVER = fileURLToPath(new URL('./server.mjs', import.meta.url));
const LOAD = fileURLToPath(new URL('./load.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const OFF = 0;
const HOOKS = 1;
const EVENT = 2;
const SPANS = 3;
const CHANNELS = 4;
const FULL = 5;
const OTEL = 6;
const VARIANTS = [
  { name: 'off', server: 'plain' },
  { name: "Node's hooks, empty handlers", server: 'node-hooks' },
  { name: 'request event alone (0x1)', server: 'plain', providers: 'Node.Channels:0x1' },
  { name: '+ span events, context=sync', server: 'plain', providers: 'Node.Channels:0x11:5:context=sync' },
  { name: '+ context across await (Node.Channels)', server: 'plain', providers: 'Node.Channels' },
  { name: '+ Runtime.*', server: 'plain', providers: `${RUNTIME},Node.Channels` },
  { name: 'OpenTelemetry http, BatchSpanProcessor', server: 'opentelemetry' },
];
/** Each part: what one variant adds to the one before it (in the same round). */
const PARTS = [
  { name: "Node's hooks with empty handlers", of: HOOKS, over: OFF },
  { name: 'the request event', of: EVENT, over: HOOKS },
  { name: "the span's two events (current in the handler)", of: SPANS, over: EVENT },
  { name: 'the span context across await', of: CHANNELS, over: SPANS },
  { name: 'Runtime.* on top', of: FULL, over: CHANNELS },
  { name: 'all of Node.Channels with spans', of: CHANNELS, over: OFF },
  { name: 'OpenTelemetry', of: OTEL, over: OFF },
];

/** The Node.js versions to measure: this one with this checkout, and BENCH_NODES's. */
function nodesToMeasure() {
  const nodes = [{ bin: process.execPath, tree: ROOT }];
  for (const entry of (process.env.BENCH_NODES ?? '').split(',').map((x) => x.trim()).filter(Boolean)) {
    const [bin, tree = ROOT] = entry.split('=');
    nodes.push({ bin, tree: resolve(tree) });
  }
  return nodes.map((n) => ({ ...n, version: checkedNode(n) }));
}

/** The version of `bin`, once it is known to load `tree`'s build and native addon (else the figures would measure a fallback). */
function checkedNode({ bin, tree }) {
  const probe = `const { loadNativeAddon } = await import(${JSON.stringify(pathToFileURL(join(tree, 'dist/providers/native-addon.js')).href)}); const r = loadNativeAddon('gc_hook'); console.log(r.addon ? process.version : 'missing: ' + r.missing);`;
  const r = spawnSync(bin, ['--input-type=module', '-e', probe], { encoding: 'utf8', env: { ...process.env, TRACEPIPE_GC_HOOK: '1' } });
  if (r.error) throw new Error(`BENCH_NODES: cannot run '${bin}' (${r.error.code ?? r.error.message})`);
  const out = r.stdout.trim();
  if (r.status !== 0 || !out.startsWith('v')) {
    throw new Error(`BENCH_NODES: ${bin} with ${tree}: ${out || r.stderr.trim().split('\n')[0]}; build that checkout for it (N=<node package dir>; PATH="$N/bin:$PATH" npm_config_nodedir="$N" npm run install; npx tsc -p tsconfig.json)`);
  }
  return out;
}

export const description = 'issues 14, 29: server CPU per request of a pinned HTTP server, split into its parts, per Node.js version: tracepipe vs OpenTelemetry vs off';

function spawnPinned(prefix, args, options, node = process.execPath) {
  const argv = [...(prefix ?? []), node, ...args];
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
      child.stdin.write(`${JSON.stringify({ url, seconds, connections: CONNECTIONS, pipelining: PIPELINING })}\n`);
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
async function startServer({ variant, node }, traceFile, pin) {
  const env = variant.providers ? { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: traceFile, TRACEPIPE_PROVIDERS: variant.providers } : process.env;
  const nodeArgs = variant.providers ? [`--import=${pathToFileURL(join(node.tree, 'dist/register.js')).href}`] : [];
  const child = spawnPinned(pin.server, [...nodeArgs, SERVER, variant.server], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }, node.bin);
  const reply = (what) => bounded(child, `${variant.name} server (Node ${node.version}), ${what}`, once(child, 'message').then(([m]) => m));
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
 * One round: a fresh server per cell (a variant on one Node.js), all started, each warmed up; then the
 * measured load in SLICES short slices per cell, taking turns in a new order each slice, so that a
 * change in the machine's speed (a neighbour, the host) lands on every cell alike instead of on
 * whichever ran in its seconds. Idle servers wait meanwhile; tracepipe's idle cost (BENCHMARKS.md §16)
 * is ~0.2 % of a CPU. Each slice's window ends a moment after its load does, so work a tracer defers
 * (a drain pass, a batch export) is counted where its requests are.
 */
async function measureRound(round, dir, pin, loader, cells) {
  const servers = [];
  const files = cells.map((_, i) => join(dir, `http-${round}-${i}.tptrace`));
  // A fresh order for every slice (seeded: runs repeat), so no cell always follows the same one;
  // start-up and warm-up go in the first slice's order.
  const orders = Array.from({ length: SLICES }, (_, slice) => shuffled(cells.length, round * (SLICES + 1) + slice));
  const turn = (k, slice = 0) => orders[slice][k];
  try {
    for (let k = 0; k < cells.length; k++) servers[turn(k)] = await startServer(cells[turn(k)], files[turn(k)], pin);
    for (let k = 0; k < cells.length; k++) await loader.run(servers[turn(k)].url, WARMUP_S);
    await sleep(SETTLE_MS);
    const sums = cells.map(() => ({ cpuUs: 0, mainRunUs: 0, mainWaitUs: 0, served: 0, requests: 0, seconds: 0, p99Ms: [], loadCpuS: 0 }));
    for (let slice = 0; slice < SLICES; slice++) {
      for (let k = 0; k < cells.length; k++) {
        const i = turn(k, slice);
        await servers[i].ask('mark');
        const load = await loader.run(servers[i].url, MEASURED_S / SLICES);
        await sleep(SETTLE_MS);
        const { cpuUs, main, served } = await servers[i].ask('measured');
        const sum = sums[i];
        sum.cpuUs += cpuUs;
        sum.mainRunUs += main.runUs ?? NaN;
        sum.mainWaitUs += main.waitUs ?? NaN;
        sum.served += served;
        sum.requests += load.requests;
        sum.seconds += load.seconds;
        sum.p99Ms.push(load.p99Ms);
        sum.loadCpuS += load.cpuShare * load.seconds;
      }
    }
    const results = [];
    for (const [i, sum] of sums.entries()) {
      // The regime: the shares of the load's seconds the server's main thread (its event loop, which
      // serves every request) spent on a CPU and waiting for one (the settle after each slice adds
      // little to either; the rest it was idle), and the load generator's share of its CPU.
      const busy = { serverBusy: sum.mainRunUs / 1e6 / sum.seconds, serverWaiting: sum.mainWaitUs / 1e6 / sum.seconds, loadBusy: sum.loadCpuS / sum.seconds };
      results[i] = { cpuUsPerRequest: sum.cpuUs / sum.served, reqPerS: sum.requests / sum.seconds, p99Ms: median(sum.p99Ms), ...busy, ...(await servers[i].stop()) };
    }
    return results;
  } finally {
    for (const server of servers) if (server && alive(server.child)) server.child.kill('SIGKILL');
    for (const f of files) rmSync(f, { force: true });
  }
}

// autocannon's latency histogram holds whole milliseconds: 0 means under 1 ms.
const p99Text = (ms) => (ms < 1 ? '<1 ms' : `${ms.toFixed(0)} ms`);
const share = (x) => (Number.isNaN(x) ? '?' : `${(100 * x).toFixed(0)} %`);
const pct = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}%`;
const us = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(2)} µs`;

/** `median (95 % interval low…high)` of per-round values, formatted by `f`. */
function withInterval(xs, f) {
  const ci = medianInterval(xs);
  return `${f(median(xs))} (${ci ? `${f(ci.low)}…${f(ci.high)}` : 'too few rounds'})`;
}

/** Whether the 95 % interval of the median of `xs` lies within ±`share` of it. */
function narrow(xs, share) {
  const ci = medianInterval(xs);
  const m = median(xs);
  return ci !== undefined && m > 0 && (ci.high - ci.low) / 2 <= share * m;
}

/** The figures of one Node.js: its cells' results, round by round. */
function reportNode(node, results, pin) {
  console.log(`\n  Node ${node.version} (${node.bin}${node.tree === ROOT ? '' : `, ${node.tree}`})`);
  // Per round, each variant against off in the same round; then the median over rounds.
  const perRound = (i, f) => results[i].map((res, k) => f(res, results[OFF][k]));
  const reqRatios = VARIANTS.map((_, i) => perRound(i, (res, off) => 100 * (res.reqPerS / off.reqPerS - 1)));
  console.log(`  ${'variant'.padEnd(40)} ${'req/s'.padStart(7)} ${'vs off (95 % interval)'.padStart(27)} ${'p99'.padStart(7)}   ${'CPU/request'.padStart(11)}   loop: ${'on CPU'.padStart(6)} ${'waiting'.padStart(7)}   ${'load on CPU'.padStart(11)}`);
  for (const [i, v] of VARIANTS.entries()) {
    const med = (f) => median(results[i].map(f));
    const cols = [
      med((res) => res.reqPerS).toFixed(0).padStart(7),
      (i === OFF ? '' : withInterval(reqRatios[i], pct)).padStart(27),
      p99Text(med((res) => res.p99Ms)).padStart(7),
      `${med((res) => res.cpuUsPerRequest).toFixed(2)} µs`.padStart(11),
      `${share(med((res) => res.serverBusy)).padStart(14)} ${share(med((res) => res.serverWaiting)).padStart(7)}`,
      `  ${share(med((res) => res.loadBusy)).padStart(11)}`,
    ];
    console.log(`  ${v.name.padEnd(40)} ${cols.join(' ')}`);
  }
  // Each part: the per-round difference of server CPU per request between its two variants.
  const part = (p) => results[p.of].map((res, k) => res.cpuUsPerRequest - results[p.over][k].cpuUsPerRequest);
  console.log(`  extra server CPU per request, median over rounds (95 % interval):`);
  for (const p of PARTS) console.log(`    ${p.name.padEnd(48)} ${withInterval(part(p), us)}`);
  const channels = part(PARTS.find((p) => p.of === CHANNELS && p.over === OFF));
  const otel = part(PARTS.find((p) => p.of === OTEL));
  const ratios = otel.map((o, k) => o / channels[k]);
  const times = (x) => `${x.toFixed(1)}×`;
  console.log(`    OpenTelemetry / Node.Channels with spans, per round  ${withInterval(ratios, times)}`);
  const event = part(PARTS.find((p) => p.of === EVENT));

  // Every request must have been recorded, or a tracer's cost would be understated.
  const total = (i, f) => results[i].reduce((a, res) => a + f(res), 0);
  const offBusy = median(results[OFF].map((res) => res.serverBusy));
  const offWaiting = median(results[OFF].map((res) => res.serverWaiting));
  if (offBusy < SATURATED) {
    const regime = `the untraced server's event loop was on its CPU ${share(offBusy)} of the load's time and waited for it ${share(offWaiting)} (load generator on its CPU ${share(median(results[OFF].map((res) => res.loadBusy)))})`;
    // Waiting for the CPU: other processes share it. Neither: the round trip sets the pace.
    if (offBusy + offWaiting >= SATURATED) console.log(`  WARNING: ${regime}: other processes took its CPU, so the figures mix in the scheduler; measure on a quiet machine`);
    else console.log(`  WARNING: ${regime}: not saturated, so each request's CPU includes waiting for the next and waking up, which can swamp the parts above; more requests in flight (BENCH_HTTP_PIPELINING, BENCH_HTTP_CONNECTIONS) saturate it`);
  }
  const checks = [
    {
      check: `Node ${node.version}: the untraced server saturated under load (share of the load's time its event loop was on its CPU)`,
      value: share(offBusy),
      target: `>= ${share(SATURATED)}`,
      met: Number.isNaN(offBusy) ? null : offBusy >= SATURATED,
    },
    {
      check: `Node ${node.version}: OpenTelemetry's extra CPU per request / Node.Channels with spans'`,
      value: withInterval(ratios, times),
      target: `>= ${TARGET_OTEL_RATIO}×`,
      met: median(ratios) >= TARGET_OTEL_RATIO,
    },
    {
      check: `Node ${node.version}: the request event over Node's hooks with empty handlers`,
      value: withInterval(event, us),
      target: `<= ${TARGET_EVENT_US} µs`,
      met: median(event) <= TARGET_EVENT_US,
    },
    {
      check: `Node ${node.version}: 95 % interval of Node.Channels with spans' extra CPU per request${pin.note ? ' (NOT PINNED)' : ''}`,
      value: withInterval(channels, us),
      target: `within ±${100 * TARGET_INTERVAL}% of the median`,
      met: narrow(channels, TARGET_INTERVAL),
    },
  ];
  for (const [i, v] of VARIANTS.entries()) {
    if (!v.providers) continue;
    const exact = results[i].every((res) => res.httpEvents === res.served && res.dropped === 0);
    console.log(`  ${v.name}: ${total(i, (res) => res.httpEvents)} ${HTTP_EVENT} events for ${total(i, (res) => res.served)} requests served; ${total(i, (res) => res.events)} events, ${total(i, (res) => res.dropped)} dropped`);
    checks.push({ check: `Node ${node.version}, ${v.name}: one ${HTTP_EVENT} per request served, none dropped`, value: exact ? 'exact' : 'not exact', target: 'exact in every round', met: exact });
  }
  const spansExact = results[OTEL].every((res) => res.spans === res.served);
  console.log(`  OpenTelemetry: ${total(OTEL, (res) => res.spans)} spans serialised for ${total(OTEL, (res) => res.served)} requests served`);
  checks.push({ check: `Node ${node.version}, OpenTelemetry: one span exported per request served`, value: spansExact ? 'exact' : 'not exact', target: 'exact in every round', met: spansExact });
  return checks;
}

export async function run() {
  const pin = pinning();
  const nodes = nodesToMeasure();
  const cells = nodes.flatMap((node) => VARIANTS.map((variant) => ({ node, variant })));
  if (pin.note) console.log(`  NOT PINNED: ${pin.note}; servers, load and tracing threads share the CPUs, so req/s mostly measures the scheduler`);
  console.log(
    `${ROUNDS} rounds; in each, a fresh server per variant and Node.js (${nodes.map((n) => n.version).join(', ')}), ${pin.note ? 'unpinned' : 'pinned to CPU 0 (taskset -c 0)'}, each warmed up for ${WARMUP_S} s, then ` +
      `${MEASURED_S} s of autocannon -c ${CONNECTIONS}${PIPELINING > 1 ? ` -p ${PIPELINING}` : ''} (${pin.note ? 'unpinned' : 'pinned to CPU 1'}) in ${SLICES} slices of ${MEASURED_S / SLICES} s, all of them taking turns in a new order each slice; server CPU from the start of each slice to ${SETTLE_MS} ms after its load`,
  );
  console.log(`  per round and Node.js, server CPU per request of: ${VARIANTS.map((v) => v.name).join(' | ')}`);
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-http-bench-'));
  const loader = startLoader(pin);
  const results = cells.map(() => []);
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const [i, res] of (await measureRound(r, dir, pin, loader, cells)).entries()) results[i].push(res);
      for (const [n, node] of nodes.entries()) {
        const line = VARIANTS.map((_, v) => results[n * VARIANTS.length + v][r].cpuUsPerRequest.toFixed(2)).join(' | ');
        console.log(`  round ${r + 1}  Node ${node.version}  ${line} µs  (load average ${loadavg()[0].toFixed(2)})`);
      }
    }
    await loader.close();
  } finally {
    loader.kill();
    rmSync(dir, { recursive: true, force: true });
  }
  return nodes.flatMap((node, n) => reportNode(node, results.slice(n * VARIANTS.length, (n + 1) * VARIANTS.length), pin));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const c of await run()) console.log(`${c.met === null ? 'info' : c.met ? 'met' : 'MISSED'}: ${c.check}: ${c.value} (target ${c.target})`);
}
