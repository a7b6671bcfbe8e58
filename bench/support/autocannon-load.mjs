// The load generator of the pinned HTTP benchmarks (pinned-http.mjs), one process for the whole run
// (pinned to the CPU the servers do not use, where possible). Each line on stdin, `{"url", "seconds" or
// "amount", "connections", "pipelining"}`, is one autocannon run (for that long, or that many requests); its result is one JSON line on stdout, with the share of a CPU
// this process used meanwhile (near 100 %: the load generator, not the server, set the pace). It exits
// when stdin ends.
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

for await (const line of createInterface({ input: process.stdin })) {
  const { url, seconds, amount, connections, pipelining } = JSON.parse(line);
  const cpu = process.cpuUsage();
  // Samples every 100 ms, so a run ends within 100 ms of `seconds` (autocannon's default is 1 s); with
  // `amount`, after that many requests, none timed out before the caller's bound on the whole run (a
  // server under Valgrind answers ~50× slower than autocannon's 10 s default expects).
  const r = await autocannon({ url, connections, pipelining, ...(amount ? { amount, timeout: 60 } : { duration: seconds }), sampleInt: 100 });
  const used = process.cpuUsage(cpu);
  if (r.errors > 0 || r.non2xx > 0) throw new Error(`${url}: ${r.errors} errors, ${r.non2xx} non-2xx responses`);
  process.stdout.write(`${JSON.stringify({ requests: r.requests.total, seconds: r.duration, p99Ms: r.latency.p99, cpuShare: (used.user + used.system) / 1e6 / r.duration })}\n`);
}
