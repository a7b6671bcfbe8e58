// HTTP server under load (autocannon, 127.0.0.1) with every runtime provider and the Node.Channels
// bridge tracing to a file, vs the same server with tracing off. Each runs in its own process; they
// take turns under load so machine noise hits both, and every round starts fresh processes, since one
// process's luck (code and heap layout) moves its throughput by several per cent for its whole life.
// Run alone: `node bench/http-overhead.mjs`. With BENCH_BASELINE=<another tracepipe checkout, built>,
// the same rounds also run that build's Runtime.* and Runtime.* + Node.Channels servers, and compare
// this tree with it round by round (a change's cost, measured under the same load).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from './support/stats.mjs';

const ROUNDS = 12;
const DURATION_S = 3;
const WARMUP_S = 1;
const CONNECTIONS = 10;
const TARGET_PERCENT = 5;
const RUNTIME = 'Runtime.GC,Runtime.GCHeap,Runtime.EventLoop,Runtime.Process';
const NODE_HOOKS = '@node-hooks';
const THIS_TREE = new URL('../dist/index.js', import.meta.url).href;
const BASELINE = process.env.BENCH_BASELINE ? pathToFileURL(join(resolve(process.env.BENCH_BASELINE), 'dist/index.js')).href : undefined;
const VARIANTS = [
  { name: 'off', providers: '' },
  // No tracepipe: what Node itself costs to hand GC pauses and http channel messages to any consumer.
  { name: "Node's hooks only", providers: NODE_HOOKS, informational: true },
  { name: 'Runtime.*', providers: RUNTIME },
  { name: 'Runtime.* + Node.Channels', providers: `${RUNTIME},Node.Channels:0x7` },
  ...(BASELINE
    ? [
        { name: 'Runtime.* (baseline)', providers: RUNTIME, dist: BASELINE, informational: true, pairedWith: 'Runtime.*' },
        { name: 'Runtime.* + Node.Channels (baseline)', providers: `${RUNTIME},Node.Channels:0x7`, dist: BASELINE, informational: true, pairedWith: 'Runtime.* + Node.Channels' },
      ]
    : []),
];

/** The floor under any GC and http tracer: a gc PerformanceObserver and channel subscribers that do nothing. */
async function installNodeHooks() {
  const { PerformanceObserver } = await import('node:perf_hooks');
  const { subscribe } = await import('node:diagnostics_channel');
  let seen = 0;
  new PerformanceObserver((list) => (seen += list.getEntries().length)).observe({ entryTypes: ['gc'] });
  for (const name of ['http.server.request.start', 'http.server.response.finish', 'net.server.socket']) subscribe(name, () => seen++);
}

export const description = 'issue 4: requests/s of an HTTP server tracing Runtime.* (and Node.Channels) to a file vs tracing off';

async function server(providers, traceFile, dist) {
  const { createServer } = await import('node:http');
  if (providers === NODE_HOOKS) await installNodeHooks();
  const session = providers && providers !== NODE_HOOKS ? await (await import(dist)).startSession({ providers, output: traceFile }) : undefined;
  let n = 0;
  const srv = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path: req.url, n: n++, items: Array.from({ length: 20 }, (_, i) => ({ i, label: `item-${i}` })) }));
  });
  srv.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: srv.address().port })}\n`));
  let mark;
  process.on('message', async (m) => {
    // Server CPU (every thread: the drain and watchdog too) per request over the measured load.
    if (m === 'mark') return process.send((mark = { cpu: process.cpuUsage(), n }));
    if (m === 'measured') {
      const cpu = process.cpuUsage(mark.cpu);
      return process.send({ cpuUsPerRequest: (cpu.user + cpu.system) / (n - mark.n) });
    }
    srv.close();
    srv.closeAllConnections();
    const result = session ? await session.stop() : undefined;
    process.send({ requests: n, eventsWritten: result?.eventsWritten ?? 0, eventsDropped: result?.eventsDropped ?? 0 });
    process.disconnect();
  });
}

async function startServer(providers, traceFile, dist = THIS_TREE) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--server', providers, traceFile, dist], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const [line] = await once(child.stdout, 'data');
  const { port } = JSON.parse(String(line));
  return {
    url: `http://127.0.0.1:${port}/api/items`,
    async ask(what) {
      child.send(what);
      const [answer] = await once(child, 'message');
      return answer;
    },
    async stop() {
      child.send('stop');
      const [stats] = await once(child, 'message');
      await once(child, 'exit');
      return stats;
    },
  };
}

async function load(url, seconds) {
  const { default: autocannon } = await import('autocannon');
  const r = await autocannon({ url, connections: CONNECTIONS, duration: seconds });
  if (r.errors > 0 || r.non2xx > 0) throw new Error(`${url}: ${r.errors} errors, ${r.non2xx} non-2xx responses`);
  return r.requests.total / seconds;
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-http-bench-'));
  try {
    // The servers live side by side and take turns, so each round's measurements see the same machine.
    console.log(`${ROUNDS} rounds, fresh server processes each: ${DURATION_S} s of autocannon (${CONNECTIONS} connections) on each server in turn, order rotating; ${WARMUP_S} s warm-up each`);
    const rps = VARIANTS.map(() => []);
    const cpu = VARIANTS.map(() => []);
    const stats = VARIANTS.map(() => ({ eventsWritten: 0, eventsDropped: 0 }));
    for (let round = 0; round < ROUNDS; round++) {
      const servers = [];
      for (const [i, v] of VARIANTS.entries()) servers.push(await startServer(v.providers, join(dir, `http-${round}-${i}.tptrace`), v.dist));
      for (const s of servers) await load(s.url, WARMUP_S);
      for (let k = 0; k < VARIANTS.length; k++) {
        const i = (round + k) % VARIANTS.length;
        await servers[i].ask('mark');
        rps[i].push(await load(servers[i].url, DURATION_S));
        cpu[i].push((await servers[i].ask('measured')).cpuUsPerRequest);
      }
      for (const [i, s] of servers.entries()) {
        const r = await s.stop();
        stats[i].eventsWritten += r.eventsWritten;
        stats[i].eventsDropped += r.eventsDropped;
      }
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      console.log(`  round ${String(round + 1).padStart(2)}  ${VARIANTS.map((v, i) => `${v.name} ${rps[i][round].toFixed(0)}`).join('   ')} req/s`);
    }
    const checks = [];
    const width = Math.max(...VARIANTS.map((v) => v.name.length));
    const spread = (ratios) => `${(100 * (1 - Math.max(...ratios))).toFixed(1)}…${(100 * (1 - Math.min(...ratios))).toFixed(1)}%`;
    console.log(`  ${'off'.padEnd(width)} median ${median(rps[0]).toFixed(0)} req/s, server CPU ${median(cpu[0]).toFixed(2)} µs per request`);
    for (let i = 1; i < VARIANTS.length; i++) {
      const ratios = rps[i].map((r, k) => r / rps[0][k]);
      const ratio = median(ratios);
      const overhead = 100 * (1 - ratio);
      const cpuExtra = median(cpu[i].map((c, k) => c / cpu[0][k] - 1)) * 100;
      console.log(
        `  ${VARIANTS[i].name.padEnd(width)} median ${median(rps[i]).toFixed(0)} req/s; req/s overhead ${overhead.toFixed(1)}% (median of per-round on/off ratios; rounds ${spread(ratios)}); ` +
          `server CPU ${median(cpu[i]).toFixed(2)} µs per request (+${cpuExtra.toFixed(1)}%); ${stats[i].eventsWritten} events written, ${stats[i].eventsDropped} dropped`,
      );
      const paired = VARIANTS.findIndex((v) => v.name === VARIANTS[i].pairedWith);
      if (paired >= 0) {
        const vsBaseline = rps[paired].map((r, k) => r / rps[i][k]);
        const cpuVsBaseline = cpu[paired].map((c, k) => c / cpu[i][k]);
        console.log(`  ${''.padEnd(width)} this tree / baseline: req/s ${median(vsBaseline).toFixed(3)}x (rounds ${Math.min(...vsBaseline).toFixed(2)}…${Math.max(...vsBaseline).toFixed(2)}), server CPU per request ${median(cpuVsBaseline).toFixed(3)}x`);
      }
      if (VARIANTS[i].informational) continue;
      checks.push({ check: `HTTP req/s overhead, ${VARIANTS[i].name}`, value: `${overhead.toFixed(1)}%`, target: `<= ${TARGET_PERCENT}%`, met: overhead <= TARGET_PERCENT });
    }
    return checks;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--server') await server(process.argv[3], process.argv[4], process.argv[5]);
else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const c of await run()) console.log(`${c.met ? 'met' : 'MISSED'}: ${c.check}: ${c.value} (target ${c.target})`);
}
