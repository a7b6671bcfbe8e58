// The load generator of the http-overhead benchmark, in its own process (pinned to the CPU the server
// does not use, where possible): `load.mjs URL WARMUP_S DURATION_S CONNECTIONS`. It warms the server
// up, prints `warm`, waits for a line on stdin (the coordinator marks the server's CPU meanwhile), then
// loads it for DURATION_S and prints the result as one JSON line.
import { once } from 'node:events';
import autocannon from 'autocannon';

const [url, warmupS, durationS, connections] = [process.argv[2], ...process.argv.slice(3).map(Number)];

async function load(seconds) {
  const r = await autocannon({ url, connections, duration: seconds });
  if (r.errors > 0 || r.non2xx > 0) throw new Error(`${url}: ${r.errors} errors, ${r.non2xx} non-2xx responses`);
  return r;
}

await load(warmupS);
process.stdout.write('warm\n');
await once(process.stdin, 'data');
const r = await load(durationS);
process.stdout.write(`${JSON.stringify({ reqPerS: r.requests.total / r.duration, p99Ms: r.latency.p99, requests: r.requests.total })}\n`);
process.stdin.destroy();
