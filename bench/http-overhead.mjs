// HTTP server under load (autocannon, 127.0.0.1) with every runtime provider and the Node.Channels
// bridge tracing to a file, vs the same server with tracing off. Each variant runs in its own server
// process; variants alternate so machine noise hits both. Run alone: `node bench/http-overhead.mjs`.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROUNDS = 3;
const DURATION_S = 5;
const WARMUP_S = 1;
const CONNECTIONS = 10;
const TARGET_PERCENT = 5;
const PROVIDERS = 'Runtime.GC,Runtime.GCHeap,Runtime.EventLoop,Runtime.Process,Node.Channels';

export const description = `issue 4: requests/s of an HTTP server with ${PROVIDERS} tracing to a file vs tracing off`;

async function server(traceFile) {
  const { createServer } = await import('node:http');
  const session = traceFile ? await (await import('../dist/index.js')).startSession({ providers: PROVIDERS, output: traceFile }) : undefined;
  let n = 0;
  const srv = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path: req.url, n: n++, items: Array.from({ length: 20 }, (_, i) => ({ i, label: `item-${i}` })) }));
  });
  srv.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: srv.address().port })}\n`));
  process.on('message', async () => {
    srv.close();
    srv.closeAllConnections();
    const result = session ? await session.stop() : undefined;
    process.send({ requests: n, eventsWritten: result?.eventsWritten ?? 0, eventsDropped: result?.eventsDropped ?? 0 });
    process.disconnect();
  });
}

async function measure(variant, dir, round) {
  const trace = variant === 'on' ? join(dir, `http-${round}.tptrace`) : '';
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--server', trace], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const [line] = await once(child.stdout, 'data');
  const { port } = JSON.parse(String(line));
  const { default: autocannon } = await import('autocannon');
  const url = `http://127.0.0.1:${port}/api/items`;
  await autocannon({ url, connections: CONNECTIONS, duration: WARMUP_S });
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S });
  child.send('stop');
  const [stats] = await once(child, 'message');
  await once(child, 'exit');
  if (r.errors > 0 || r.non2xx > 0) throw new Error(`${variant}: ${r.errors} errors, ${r.non2xx} non-2xx responses`);
  return { rps: r.requests.total / DURATION_S, p99Ms: r.latency.p99, ...stats };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-http-bench-'));
  try {
    console.log(`${ROUNDS} rounds x 2 variants, alternating; each a fresh server process, ${WARMUP_S} s warm-up then ${DURATION_S} s of autocannon with ${CONNECTIONS} connections`);
    const res = { off: [], on: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const v of round % 2 ? ['on', 'off'] : ['off', 'on']) {
        const m = await measure(v, dir, round);
        res[v].push(m);
        console.log(`  round ${round + 1} ${v.padEnd(3)} ${m.rps.toFixed(0).padStart(7)} req/s  p99 ${m.p99Ms} ms${v === 'on' ? `  ${m.eventsWritten} events written, ${m.eventsDropped} dropped` : ''}`);
      }
    }
    const off = median(res.off.map((m) => m.rps));
    const on = median(res.on.map((m) => m.rps));
    const overhead = 100 * (1 - on / off);
    const perRound = res.on.map((m, k) => `${(100 * (1 - m.rps / res.off[k].rps)).toFixed(1)}%`);
    console.log(`  tracing off  median ${off.toFixed(0)} req/s`);
    console.log(`  tracing on   median ${on.toFixed(0)} req/s  (ratio on/off ${(on / off).toFixed(3)})`);
    console.log(`  overhead     ${overhead.toFixed(1)}% (per round: ${perRound.join(', ')})`);
    return [{ check: 'HTTP req/s overhead with Runtime.* + Node.Channels', value: `${overhead.toFixed(1)}%`, target: `<= ${TARGET_PERCENT}%`, met: overhead <= TARGET_PERCENT }];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--server') await server(process.argv[3]);
else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const c of await run()) console.log(`${c.met ? 'met' : 'MISSED'}: ${c.check}: ${c.value} (target ${c.target})`);
}
