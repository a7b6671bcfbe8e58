// What tracing an HTTP server costs, measured the way users compare tracers: the server and all its
// threads pinned to CPU 0, the load generator (autocannon) pinned to CPU 1, so the scheduler does not
// trade one for the other; server CPU per request (process.cpuUsage(), every thread) is the headline,
// req/s and p99 latency beside it. Variants, in the same run: tracing off; Node's hooks alone (the
// floor under any GC and http tracer); tracepipe's Node.Channels; tracepipe's Runtime.* +
// Node.Channels (both as startup sessions to a file, configured by environment variables); and
// OpenTelemetry's HTTP auto-instrumentation exporting every span. Every round starts a fresh server
// per variant (one process's code and heap layout moves its throughput for its whole life), one at a
// time, in an order that rotates. Run alone: `node bench/run.mjs http-overhead` (after `npm run build`).
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { median } from '../support/stats.mjs';

const ROUNDS = 8;
const WARMUP_S = 1;
const DURATION_S = 3;
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
  { name: 'tracepipe Node.Channels', server: 'plain', providers: 'Node.Channels' },
  { name: 'tracepipe Runtime.* + Node.Channels', server: 'plain', providers: `${RUNTIME},Node.Channels` },
  { name: 'OpenTelemetry http, BatchSpanProcessor', server: 'opentelemetry' },
];

export const description = 'issue 14: server CPU per request, req/s and p99 of a pinned HTTP server: tracepipe vs OpenTelemetry vs off';

/** `taskset` prefixes for the server (CPU 0) and the load (CPU 1), or why there are none. */
function pinning() {
  if (availableParallelism() < 2) return { note: `only ${availableParallelism()} CPU` };
  for (const cpu of ['0', '1']) {
    const r = spawnSync('taskset', ['-c', cpu, 'true']);
    if (r.error) return { note: `taskset is not available (${r.error.code ?? r.error.message})` };
    if (r.status !== 0) return { note: `taskset -c ${cpu} failed: ${String(r.stderr).trim()}` };
  }
  return { server: ['taskset', '-c', '0'], load: ['taskset', '-c', '1'] };
}

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

/** One fresh server of `variant`: warm-up, then the measured load; what it served, and what its tracer recorded. */
async function measure(variant, traceFile, pin) {
  const { readTrace } = await import('../../dist/index.js');
  const env = variant.providers ? { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: traceFile, TRACEPIPE_PROVIDERS: variant.providers } : process.env;
  const nodeArgs = variant.providers ? [`--import=${REGISTER}`] : [];
  const server = spawnPinned(pin.server, [...nodeArgs, SERVER, variant.server], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let loader;
  try {
    const ask = (what) => {
      server.send(what);
      return bounded(server, `${variant.name} server, '${what}'`, once(server, 'message').then(([m]) => m));
    };
    const { port } = await bounded(server, `${variant.name} server start`, once(server, 'message').then(([m]) => m));
    loader = spawnPinned(pin.load, [LOAD, `http://127.0.0.1:${port}/api/items`, String(WARMUP_S), String(DURATION_S), String(CONNECTIONS)], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: loader.stdout })[Symbol.asyncIterator]();
    const line = async (what) => {
      const { value, done } = await bounded(loader, `${variant.name} load, ${what}`, lines.next());
      if (done) throw new Error(`${variant.name} load: no ${what}`);
      return value;
    };
    await line('warm-up');
    await ask('mark');
    loader.stdin.write('go\n');
    const load = JSON.parse(await line('result'));
    const { cpuUsPerRequest } = await ask('measured');
    const { served, spans } = await ask('stop');
    await exited(server, `${variant.name} server`);
    await exited(loader, `${variant.name} load`);
    const result = { ...load, cpuUsPerRequest, served, spans };
    if (!variant.providers) return result;
    const s = await readTrace(traceFile).summary();
    if (!s.complete) throw new Error(`${traceFile}: incomplete trace (${s.error?.message})`);
    return { ...result, httpEvents: s.byEvent[HTTP_EVENT] ?? 0, events: s.events, dropped: s.dropped };
  } finally {
    for (const child of [server, loader]) if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(traceFile, { force: true });
  }
}

const pct = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}%`;
const us = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(2)} µs`;

export async function run() {
  const pin = pinning();
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-http-bench-'));
  if (pin.note) console.log(`  NOT PINNED: ${pin.note}; server, load and tracing threads share the CPUs, so req/s mostly measures the scheduler`);
  console.log(
    `${ROUNDS} rounds; each round a fresh server per variant, one at a time, order rotating; server ${pin.note ? 'unpinned' : 'pinned to CPU 0 (taskset -c 0)'}, ` +
      `autocannon -c ${CONNECTIONS} ${pin.note ? 'unpinned' : 'pinned to CPU 1'} in its own process: ${WARMUP_S} s warm-up, then ${DURATION_S} s measured`,
  );
  const results = VARIANTS.map(() => []);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < VARIANTS.length; k++) {
        const i = (round + k) % VARIANTS.length;
        results[i].push(await measure(VARIANTS[i], join(dir, `http-${round}-${i}.tptrace`), pin));
      }
      const line = VARIANTS.map((v, i) => `${results[i][round].reqPerS.toFixed(0)} req/s ${results[i][round].cpuUsPerRequest.toFixed(2)} µs`).join(' | ');
      console.log(`  round ${round + 1}  ${line}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  // Per round, each variant against off measured in the same round; then the median over rounds.
  const perRound = (i, f) => median(results[i].map((r, k) => f(r, results[OFF][k])));
  const extraCpu = VARIANTS.map((_, i) => perRound(i, (r, off) => r.cpuUsPerRequest - off.cpuUsPerRequest));
  const reqChange = VARIANTS.map((_, i) => 100 * perRound(i, (r, off) => r.reqPerS / off.reqPerS - 1));
  console.log(`\n  ${'variant'.padEnd(40)} ${'req/s'.padStart(7)} ${'vs off'.padStart(7)} ${'p99'.padStart(7)}   ${'CPU/request'.padStart(11)} ${'extra vs off'.padStart(13)}`);
  for (const [i, v] of VARIANTS.entries()) {
    const med = (f) => median(results[i].map(f));
    const cols = [
      med((r) => r.reqPerS).toFixed(0).padStart(7),
      (i === OFF ? '' : pct(reqChange[i])).padStart(7),
      `${med((r) => r.p99Ms).toFixed(0)} ms`.padStart(7),
      `${med((r) => r.cpuUsPerRequest).toFixed(2)} µs`.padStart(11),
      (i === OFF ? '' : us(extraCpu[i])).padStart(13),
    ];
    console.log(`  ${v.name.padEnd(40)} ${cols[0]} ${cols[1]} ${cols[2]}   ${cols[3]} ${cols[4]}`);
  }

  // Every request must have been recorded, or a tracer's cost would be understated.
  const sum = (i, f) => results[i].reduce((a, r) => a + f(r), 0);
  const served = VARIANTS.map((_, i) => sum(i, (r) => r.served));
  const counts = [];
  for (const [i, v] of VARIANTS.entries()) {
    if (v.providers) {
      const exact = results[i].every((r) => r.httpEvents === r.served && r.dropped === 0);
      console.log(`  ${v.name}: ${sum(i, (r) => r.httpEvents)} ${HTTP_EVENT} events for ${served[i]} requests served, ${sum(i, (r) => r.events)} events, ${sum(i, (r) => r.dropped)} dropped`);
      counts.push({ check: `${v.name}: one ${HTTP_EVENT} per request served, none dropped`, value: exact ? 'exact' : 'not exact', target: 'exact in every round', met: exact });
    }
  }
  const spansExact = results[OTEL].every((r) => r.spans === r.served);
  console.log(`  OpenTelemetry: ${sum(OTEL, (r) => r.spans)} spans serialised for ${served[OTEL]} requests served`);
  counts.push({ check: 'OpenTelemetry: one span exported per request served', value: spansExact ? 'exact' : 'not exact', target: 'exact in every round', met: spansExact });

  const share = extraCpu[OTEL] / extraCpu[FULL];
  const overhead = -reqChange[FULL];
  return [
    {
      check: `extra server CPU per request, Runtime.* + Node.Channels vs OpenTelemetry`,
      value: `${us(extraCpu[FULL])} vs ${us(extraCpu[OTEL])} (1/${share > 0 ? share.toFixed(1) : '∞'})`,
      target: `<= 1/${TARGET_CPU_SHARE}`,
      met: extraCpu[FULL] * TARGET_CPU_SHARE <= extraCpu[OTEL],
    },
    {
      check: `req/s overhead, Runtime.* + Node.Channels${pin.note ? ' (NOT PINNED)' : ', pinned'}`,
      value: `${overhead.toFixed(1)}% (OpenTelemetry ${(-reqChange[OTEL]).toFixed(1)}%, Node.Channels only ${(-reqChange[CHANNELS]).toFixed(1)}%)`,
      target: `<= ${TARGET_REQ_PERCENT}%`,
      met: pin.note ? null : overhead <= TARGET_REQ_PERCENT,
    },
    ...counts,
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const c of await run()) console.log(`${c.met === null ? 'info' : c.met ? 'met' : 'MISSED'}: ${c.check}: ${c.value} (target ${c.target})`);
}
