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
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { pinning } from '../support/pinning.mjs';
import { httpLoad, nodesToMeasure, ROOT, startJsonServer, startLoader } from '../support/pinned-http.mjs';
import { REGIME_HEADER, regimeColumns, regimeOf, saturationCheck } from '../support/server-regime.mjs';
import { SLICED_TIMING, slicedRound } from '../support/sliced-rounds.mjs';
import { median, narrow, signedMicros, signedPercent, timesText, withInterval } from '../support/stats.mjs';
import { wholeFromEnv } from '../support/whole-from-env.mjs';
import { CHANNELS, countChecks, EVENT, finishServer, OFF, OTEL, PARTS, TARGET_EVENT_US, TARGET_OTEL_RATIO, VARIANTS } from '../support/http-variants.mjs';

// BENCH_HTTP_ROUNDS: more rounds narrow the median where single rounds differ by ±10 % (a shared machine).
const ROUNDS = wholeFromEnv('BENCH_HTTP_ROUNDS', 8);
const { warmupS: WARMUP_S, measuredS: MEASURED_S, slices: SLICES, settleMs: SETTLE_MS } = SLICED_TIMING;
const TARGET_INTERVAL = 0.25;

export const description = 'issues 14, 29: server CPU per request of a pinned HTTP server, split into its parts, per Node.js version: tracepipe vs OpenTelemetry vs off';

/**
 * One round (support/sliced-rounds.mjs): a fresh server per cell, the cells taking turns in short
 * slices. Idle servers wait meanwhile; tracepipe's idle cost (BENCHMARKS.md §16) is ~0.2 % of a CPU.
 * Each slice's window ends a moment after its load does, so work a tracer defers (a drain pass, a
 * batch export) is counted where its requests are.
 */
async function measureRound(round, dir, pin, loader, cells) {
  const files = cells.map((_, i) => join(dir, `http-${round}-${i}.tptrace`));
  try {
    return await slicedRound({
      round,
      count: cells.length,
      loader,
      ...SLICED_TIMING,
      start: (i) => {
        const { variant, node } = cells[i];
        const env = variant.providers ? { TRACEPIPE_OUTPUT: files[i] } : {};
        return startJsonServer({ name: variant.name, kind: variant.server, node, pin, providers: variant.providers, env });
      },
      async slice(i, server, runLoad) {
        await server.ask('mark');
        await runLoad();
        await sleep(SETTLE_MS);
        const { cpuUs, served, main } = await server.ask('measured');
        return { cpuUs, served, mainRunUs: main.runUs ?? NaN, mainWaitUs: main.waitUs ?? NaN };
      },
      finish: (i, server, sum) => finishServer(cells[i].variant, server, files[i]).then((r) => ({ ...r, cpuUsPerRequest: sum.cpuUs / sum.served, ...regimeOf(sum) })),
    });
  } finally {
    for (const f of files) rmSync(f, { force: true });
  }
}

// autocannon's latency histogram holds whole milliseconds: 0 means under 1 ms.
const p99Text = (ms) => (ms < 1 ? '<1 ms' : `${ms.toFixed(0)} ms`);

/** The figures of one Node.js: its cells' results, round by round. */
function reportNode(node, results, pin) {
  console.log(`\n  Node ${node.version} (${node.bin}${node.tree === ROOT ? '' : `, ${node.tree}`})`);
  // Per round, each variant against off in the same round; then the median over rounds.
  const perRound = (i, f) => results[i].map((res, k) => f(res, results[OFF][k]));
  const reqRatios = VARIANTS.map((_, i) => perRound(i, (res, off) => 100 * (res.reqPerS / off.reqPerS - 1)));
  console.log(`  ${'variant'.padEnd(40)} ${'req/s'.padStart(7)} ${'vs off (95 % interval)'.padStart(27)} ${'p99'.padStart(7)}   ${'CPU/request'.padStart(11)}   ${REGIME_HEADER}`);
  for (const [i, v] of VARIANTS.entries()) {
    const med = (f) => median(results[i].map(f));
    const cols = [
      med((res) => res.reqPerS).toFixed(0).padStart(7),
      (i === OFF ? '' : withInterval(reqRatios[i], signedPercent)).padStart(27),
      p99Text(med((res) => res.p99Ms)).padStart(7),
      `${med((res) => res.cpuUsPerRequest).toFixed(2)} µs`.padStart(11),
      regimeColumns(results[i]),
    ];
    console.log(`  ${v.name.padEnd(40)} ${cols.join(' ')}`);
  }
  // Each part: the per-round difference of server CPU per request between its two variants.
  const part = (p) => results[p.of].map((res, k) => res.cpuUsPerRequest - results[p.over][k].cpuUsPerRequest);
  console.log(`  extra server CPU per request, median over rounds (95 % interval):`);
  for (const p of PARTS) console.log(`    ${p.name.padEnd(48)} ${withInterval(part(p), signedMicros)}`);
  const channels = part(PARTS.find((p) => p.of === CHANNELS && p.over === OFF));
  const otel = part(PARTS.find((p) => p.of === OTEL));
  const ratios = otel.map((o, k) => o / channels[k]);
    console.log(`    OpenTelemetry / Node.Channels with spans, per round  ${withInterval(ratios, timesText)}`);
  const event = part(PARTS.find((p) => p.of === EVENT));

  const checks = [
    saturationCheck(node, results[OFF]),
    {
      check: `Node ${node.version}: OpenTelemetry's extra CPU per request / Node.Channels with spans'`,
      value: withInterval(ratios, timesText),
      target: `>= ${TARGET_OTEL_RATIO}×`,
      met: median(ratios) >= TARGET_OTEL_RATIO,
    },
    {
      check: `Node ${node.version}: the request event over Node's hooks with empty handlers`,
      value: withInterval(event, signedMicros),
      target: `<= ${TARGET_EVENT_US} µs`,
      met: median(event) <= TARGET_EVENT_US,
    },
    {
      check: `Node ${node.version}: 95 % interval of Node.Channels with spans' extra CPU per request${pin.note ? ' (NOT PINNED)' : ''}`,
      value: withInterval(channels, signedMicros),
      target: `within ±${100 * TARGET_INTERVAL}% of the median`,
      met: narrow(channels, TARGET_INTERVAL),
    },
  ];
  checks.push(...countChecks(node, results));
  return checks;
}

export async function run() {
  const pin = pinning();
  const load = httpLoad();
  const nodes = nodesToMeasure();
  const cells = nodes.flatMap((node) => VARIANTS.map((variant) => ({ node, variant })));
  if (pin.note) console.log(`  NOT PINNED: ${pin.note}; servers, load and tracing threads share the CPUs, so req/s mostly measures the scheduler`);
  console.log(
    `${ROUNDS} rounds; in each, a fresh server per variant and Node.js (${nodes.map((n) => n.version).join(', ')}), ${pin.note ? 'unpinned' : 'pinned to CPU 0 (taskset -c 0)'}, each warmed up for ${WARMUP_S} s, then ` +
      `${MEASURED_S} s of ${load.text} (${pin.note ? 'unpinned' : 'pinned to CPU 1'}) in ${SLICES} slices of ${MEASURED_S / SLICES} s, all of them taking turns in a new order each slice; server CPU from the start of each slice to ${SETTLE_MS} ms after its load`,
  );
  console.log(`  per round and Node.js, server CPU per request of: ${VARIANTS.map((v) => v.name).join(' | ')}`);
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-http-bench-'));
  const loader = startLoader(pin, load);
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
