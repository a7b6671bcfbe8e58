// Added request latency of an HTTP server while `tracepipe collect` streams a session out of it over the
// diagnostics socket, vs the same server with no tracepipe, idle (server only), and a session of its
// request events. In the 'full rate' case a worker thread in the server writes events as fast as it
// can, so the session streams at the pipeline's maximum. A keep-alive client in this process measures
// each request with hrtime; the cases take turns, in alternating order, so machine noise hits all.
// Run alone: `node bench/collect-latency.mjs` (after `npm run build`).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from './support/stats.mjs';

const ROUNDS = 3;
const MEASURE_MS = 2500;
const WARMUP_MS = 1000;
const CONCURRENCY = 4;
const CASES = ['no tracepipe', 'idle server', 'request events', 'full rate'];
const PROVIDERS = { 'request events': 'Bench.Http', 'full rate': 'Bench.Http,Bench.Flood' };

const SELF = fileURLToPath(import.meta.url);
const DIST = new URL('../dist/', import.meta.url);
const CLI = fileURLToPath(new URL('cli/main.js', DIST));

export const description = 'issue 5: HTTP request latency while `tracepipe collect` streams a session over IPC (at full rate: a worker writing flat out), vs no tracepipe';

/** The traced server: two events per request on the main thread; a worker floods while enabled. */
async function serve() {
  const { defineProvider } = await import(new URL('index.js', DIST).href);
  const { isMainThread, Worker } = await import('node:worker_threads');
  if (!isMainThread) {
    const flood = defineProvider('Bench.Flood', { events: { Item: { id: 1, fields: [['n', 'u32'], ['x', 'f64'], ['label', 'string']] } } });
    let n = 0;
    // Yield between batches: a session reaches a running worker through its event loop.
    const tick = () => {
      if (!flood.Item.enabled) return void setTimeout(tick, 5);
      for (let i = 0; i < 2000; i++) flood.Item.write(n++, n * 0.5, 'flood');
      setImmediate(tick);
    };
    tick();
    return;
  }
  const app = defineProvider('Bench.Http', {
    events: {
      RequestStart: { id: 1, fields: [['route', 'string']] },
      RequestStop: { id: 2, fields: [['route', 'string'], ['status', 'u16'], ['durationMs', 'f64']] },
    },
  });
  new Worker(new URL(import.meta.url), { argv: ['--serve'] }).unref();
  const server = http.createServer((req, res) => {
    const t0 = performance.now();
    if (app.RequestStart.enabled) app.RequestStart.write(req.url);
    const body = JSON.stringify({ path: req.url, items: Array.from({ length: 10 }, (_, i) => ({ i, label: `item-${i}` })) });
    res.setHeader('content-type', 'application/json');
    res.end(body);
    if (app.RequestStop.enabled) app.RequestStop.write(req.url, 200, performance.now() - t0);
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
  process.stdin.on('close', () => process.exit(0)).resume();
}

async function startServer(traced, env) {
  const args = traced ? [`--import=${new URL('register.js', DIST).href}`, SELF, '--serve'] : [SELF, '--serve'];
  const child = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = await once(child.stdout, 'data');
  return { child, port: Number(String(line).trim()) };
}

/** `ms` of requests from CONCURRENCY keep-alive loops; every latency in µs. */
async function load(port, ms) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies = [];
  const end = performance.now() + ms;
  const one = () =>
    new Promise((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      http
        .get({ host: '127.0.0.1', port, path: '/api/items', agent }, (res) => {
          res.on('data', () => undefined);
          res.on('end', () => {
            latencies.push(Number(process.hrtime.bigint() - t0) / 1000);
            resolve();
          });
        })
        .on('error', reject);
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) await one();
    }),
  );
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), rps: latencies.length / (ms / 1000) };
}

/** Attaches `tracepipe collect` to the server; resolves once the session is live. */
async function attach(pid, providers, file, env) {
  const { processInfo } = await import(new URL('index.js', DIST).href);
  const cli = spawn(process.execPath, [CLI, 'collect', '--pid', String(pid), '--providers', providers, '-o', file], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  cli.stdout.on('data', (d) => (out += d));
  cli.stderr.on('data', () => undefined);
  for (let i = 0; (await processInfo(pid)).sessions.length === 0; i++) {
    if (i > 200) throw new Error('the collect session did not start');
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    async stop() {
      cli.kill('SIGINT');
      const [code] = await once(cli, 'exit');
      if (code !== 0) throw new Error(`tracepipe collect exited with ${code}: ${out}`);
    },
  };
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-collect-bench-'));
  // Sockets go to this directory: the bench finds its own server and nothing else.
  const env = { ...process.env, TMPDIR: dir };
  const savedTmp = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  const { readTrace } = await import(new URL('index.js', DIST).href);
  const plain = await startServer(false, env);
  const traced = await startServer(true, env);
  try {
    console.log(`${ROUNDS} rounds of ${MEASURE_MS / 1000} s per case (${CONCURRENCY} keep-alive connections, 127.0.0.1), order alternating; ${WARMUP_MS / 1000} s warm-up`);
    await load(plain.port, WARMUP_MS);
    await load(traced.port, WARMUP_MS);
    const res = Object.fromEntries(CASES.map((c) => [c, []]));
    const streamed = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of round % 2 ? [...CASES].reverse() : CASES) {
        const file = join(dir, `${round}-${c.replace(/ /g, '-')}.tptrace`);
        const session = PROVIDERS[c] ? await attach(traced.child.pid, PROVIDERS[c], file, env) : undefined;
        const started = performance.now();
        res[c].push(await load(c === 'no tracepipe' ? plain.port : traced.port, MEASURE_MS));
        await session?.stop();
        if (c === 'full rate') {
          const s = await readTrace(file).summary();
          streamed.push({ eventsPerS: s.events / ((performance.now() - started) / 1000), dropped: s.dropped / (s.events + s.dropped), mbPerS: s.bytes / 1048576 / ((performance.now() - started) / 1000) });
        }
      }
      const line = CASES.map((c) => `${c} p50 ${res[c][round].p50.toFixed(0)} µs`).join(' | ');
      console.log(`  round ${round + 1}: ${line}`);
    }
    const base = res['no tracepipe'];
    console.log(`  ${'case'.padEnd(16)} ${'p50 µs'.padStart(8)} ${'p90 µs'.padStart(8)} ${'p99 µs'.padStart(8)} ${'req/s'.padStart(8)}   p50 ×  p99 ×  req/s ×   (medians of rounds; × = vs no tracepipe, same round)`);
    const ratios = {};
    for (const c of CASES) {
      const r = res[c];
      const ratio = (k) => median(r.map((x, i) => x[k] / base[i][k]));
      ratios[c] = { p50: ratio('p50'), p99: ratio('p99'), rps: ratio('rps') };
      const m = (k) => median(r.map((x) => x[k]));
      console.log(`  ${c.padEnd(16)} ${m('p50').toFixed(0).padStart(8)} ${m('p90').toFixed(0).padStart(8)} ${m('p99').toFixed(0).padStart(8)} ${m('rps').toFixed(0).padStart(8)}   ${ratios[c].p50.toFixed(2).padStart(5)}  ${ratios[c].p99.toFixed(2).padStart(5)}  ${ratios[c].rps.toFixed(2).padStart(7)}`);
    }
    const rate = median(streamed.map((s) => s.eventsPerS));
    const mb = median(streamed.map((s) => s.mbPerS));
    const lost = median(streamed.map((s) => s.dropped));
    console.log(`  full rate streamed ${(rate / 1e6).toFixed(2)} M events/s (${mb.toFixed(0)} MiB/s) to the CLI, ${(100 * lost).toFixed(1)}% of attempts dropped (drop mode, 64 MiB buffer)`);
    const fmt = (c) => `p50 ×${ratios[c].p50.toFixed(2)}, p99 ×${ratios[c].p99.toFixed(2)}, req/s ×${ratios[c].rps.toFixed(2)}`;
    return [
      { check: 'request latency, diagnostics server idle', value: fmt('idle server'), target: null, met: null },
      { check: 'request latency, collect session of request events', value: fmt('request events'), target: null, met: null },
      { check: `request latency, collect streaming at full rate (${(rate / 1e6).toFixed(2)} M events/s)`, value: fmt('full rate'), target: null, met: null },
    ];
  } finally {
    plain.child.kill();
    traced.child.kill();
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--serve')) await serve();
else if (process.argv[1] === SELF) {
  for (const c of await run()) console.log(`info: ${c.check}: ${c.value}`);
}
