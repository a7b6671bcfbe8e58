// What exporting every request's span over OTLP costs an HTTP server: tracepipe (a startup session of
// Node.Channels exporting live OTLP/HTTP protobuf from its drain thread, with and without a trace file
// beside it) against OpenTelemetry's SDK (NodeTracerProvider, HttpInstrumentation, BatchSpanProcessor
// and the project's OTLP/HTTP protobuf exporter, its defaults), both sending to the same local
// collector, and the same server untraced. Pinned as the http-overhead benchmark is: servers and all
// their threads on CPU 0; autocannon and the collector (receiver.mjs) on CPU 1; a fresh server per
// variant and round; each variant's measured seconds in short slices, the variants taking turns in a
// new seeded order each slice (support/sliced-rounds.mjs).
// The headline is the CPU time of the server's main thread per request (utime + stime of
// /proc/PID/task/PID/stat: where the application runs, which tracepipe keeps its encoding and sending
// off), whole-process CPU per request beside it (/proc/PID/stat, every thread: the drain and sender
// threads included) and each thread's, read by this process from the start of each slice's load to
// 1.5 s after its end (longer than an OTLP batch's second: deferred encoding and sending fall inside).
// Every exported span is accounted for on both sides: the collector decodes every request with the
// OpenTelemetry project's own protobuf definitions and counts spans per service.name (one per server),
// which must equal the requests the server served and what its exporter says it sent.
// The regime as in http-overhead: each variant's line says how much of the load's time its event loop
// was on its CPU and waiting for it, and a check warns when the untraced server was not saturated
// (BENCH_HTTP_PIPELINING and BENCH_HTTP_CONNECTIONS set the load here too).
// BENCH_NODES as in http-overhead: more Node.js versions in the same rounds. Run alone: `node bench/run.mjs otlp`.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { pinning } from '../support/pinning.mjs';
import { procStatFields } from '../support/proc-stat.mjs';
import { alive, bounded, exited, httpLoad, nodesToMeasure, ROOT, spawnPinned, startJsonServer, startLoader } from '../support/pinned-http.mjs';
import { REGIME_HEADER, regimeColumns, regimeOf, saturationCheck } from '../support/server-regime.mjs';
import { SLICED_TIMING, slicedRound } from '../support/sliced-rounds.mjs';
import { drainStages } from './drain-stages.mjs';
import { median, signedMicros, signedPercent, timesText, withInterval } from '../support/stats.mjs';
import { wholeFromEnv } from '../support/whole-from-env.mjs';

// BENCH_OTLP_ROUNDS: at 95 %, 8 rounds give the interval min…max; 10 drop one round at each end.
const ROUNDS = wholeFromEnv('BENCH_OTLP_ROUNDS', 10);
const { warmupS: WARMUP_S, measuredS: MEASURED_S, slices: SLICES, settleMs: SETTLE_MS } = SLICED_TIMING;
/** A slice's window closes this long after its load, longer than tracepipe's OTLP batch interval (1 s): its partial batch is encoded and sent inside. */
const WINDOW_MS = 1500;
const TARGET_MAIN_RATIO = 10;
/** The load on the server whose trace the drain's stages are timed on. */
const STAGES_LOAD_S = 2;

const RECEIVER = fileURLToPath(new URL('./receiver.mjs', import.meta.url));

const OFF = 0;
const TRACEPIPE = 1;
const TRACEPIPE_FILE = 2;
const OTEL = 3;
const FILE_ONLY = 4;
const VARIANTS = [
  { name: 'off', kind: 'plain' },
  { name: 'tracepipe → OTLP', kind: 'plain', providers: 'Node.Channels', otlp: true },
  { name: 'tracepipe → file + OTLP', kind: 'plain', providers: 'Node.Channels', otlp: true, file: true },
  { name: 'OpenTelemetry SDK → OTLP', kind: 'opentelemetry-otlp' },
  // The same session to a file only: what OTLP adds to recording.
  { name: 'tracepipe → file, no OTLP', kind: 'plain', providers: 'Node.Channels', file: true },
];

export const description = 'issue 28: main-thread and whole-process CPU per request of a pinned HTTP server exporting every span over OTLP: tracepipe vs OpenTelemetry vs off';

/** Clock ticks per second of /proc's CPU times. */
const TICKS_PER_S = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** utime and stime of a /proc stat line, in µs (counted from the command's closing parenthesis: the command may hold any character). */
function statCpu(path) {
  const fields = procStatFields(path);
  return { userUs: (Number(fields[11]) * 1e6) / TICKS_PER_S, sysUs: (Number(fields[12]) * 1e6) / TICKS_PER_S };
}

const totalUs = ({ userUs, sysUs }) => userUs + sysUs;

/** How often the thread of a /proc status file was switched out while it could have run on (preempted). */
function preemptions(path) {
  return Number(/nonvoluntary_ctxt_switches:\s*(\d+)/.exec(readFileSync(path, 'utf8'))?.[1] ?? 0);
}

/**
 * The CPU time of process `pid` so far, in µs: its main thread's (user and system, and its
 * preemptions), the whole process's, and each live thread's by id (a thread that ended still counts
 * in the process's).
 */
function cpuOf(pid) {
  const threads = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      threads.set(Number(tid), totalUs(statCpu(`/proc/${pid}/task/${tid}/stat`)));
    } catch {
      // The thread ended between the listing and the reading: its time is in the process's.
    }
  }
  const main = statCpu(`/proc/${pid}/task/${pid}/stat`);
  return { mainUs: totalUs(main), mainSysUs: main.sysUs, mainPreemptions: preemptions(`/proc/${pid}/task/${pid}/status`), processUs: totalUs(statCpu(`/proc/${pid}/stat`)), threads };
}

/** What happened between two readings of `cpuOf`: each figure's difference, each thread's by id. */
function cpuBetween(start, end) {
  const threads = new Map([...end.threads].map(([tid, us]) => [tid, us - (start.threads.get(tid) ?? 0)]));
  return { mainUs: end.mainUs - start.mainUs, mainSysUs: end.mainSysUs - start.mainSysUs, mainPreemptions: end.mainPreemptions - start.mainPreemptions, processUs: end.processUs - start.processUs, threads };
}

/** The collector, pinned with the load generator: `counts()` is what it decoded so far, per service. */
export async function startReceiver(pin) {
  const child = spawnPinned(pin.load, [RECEIVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const reply = (what) => bounded(child, `the OTLP receiver, ${what}`, once(child, 'message').then(([m]) => m));
  const { port } = await reply('start');
  return {
    url: `http://127.0.0.1:${port}`,
    counts() {
      child.send('counts');
      return reply('counts');
    },
    async close() {
      child.disconnect();
      await exited(child, 'the OTLP receiver');
    },
    kill: () => alive(child) && child.kill('SIGKILL'),
  };
}

/** The environment of a server of `variant`: its exporter pointed at the receiver, as service `service`. */
function exportEnv(variant, receiverUrl, service, traceFile) {
  if (variant.kind === 'opentelemetry-otlp') return { OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl, OTEL_SERVICE_NAME: service };
  if (!variant.providers) return {};
  return { ...(variant.otlp ? { TRACEPIPE_OTLP_ENDPOINT: receiverUrl, TRACEPIPE_SERVICE_NAME: service } : {}), ...(variant.file ? { TRACEPIPE_OUTPUT: traceFile } : {}) };
}

/**
 * One round: a fresh server per cell, taking turns in slices. A slice's window opens as its load
 * begins (queued spans flushed first) and closes WINDOW_MS after it ends (spans flushed again), while
 * the next cells take their turns: deferred work (a batch encoded and sent) counts where its requests
 * are, and a server's idle time between its slices does not. Then each server stops (tracepipe's
 * session and OpenTelemetry's provider flush as they stop).
 */
async function measureRound(round, dir, pin, loader, receiver, cells) {
  const files = cells.map((_, i) => join(dir, `otlp-${round}-${i}.tptrace`));
  const services = cells.map((_, i) => `bench-${round}-${i}`);
  const sums = cells.map(() => ({ mainUs: 0, mainSysUs: 0, mainPreemptions: 0, processUs: 0, mainRunUs: 0, mainWaitUs: 0, served: 0, threads: new Map() }));
  const closing = [];
  /** Reads server `i`'s CPU and served requests: `close()` of what it returns adds the window since to its sums. */
  const openWindow = async (i, server) => {
    const { served, main } = await server.ask('flush');
    const start = cpuOf(server.child.pid);
    return async () => {
      const end = await server.ask('flush');
      const cpu = cpuBetween(start, cpuOf(server.child.pid));
      const sum = sums[i];
      sum.mainUs += cpu.mainUs;
      sum.mainSysUs += cpu.mainSysUs;
      sum.mainPreemptions += cpu.mainPreemptions;
      sum.processUs += cpu.processUs;
      sum.served += end.served - served;
      // The main thread's times on a CPU and waiting for one (its own schedstat; NaN where missing):
      // the regime. The window's tail after the load adds little to either.
      sum.mainRunUs += end.main && main ? (end.main.runNs - main.runNs) / 1e3 : NaN;
      sum.mainWaitUs += end.main && main ? (end.main.waitNs - main.waitNs) / 1e3 : NaN;
      for (const [tid, us] of cpu.threads) sum.threads.set(tid, (sum.threads.get(tid) ?? 0) + us);
    };
  };
  try {
    return await slicedRound({
      round,
      count: cells.length,
      loader,
      ...SLICED_TIMING,
      start: (i) => {
        const { variant, node } = cells[i];
        return startJsonServer({ name: variant.name, kind: variant.kind, node, pin, providers: variant.providers, env: exportEnv(variant, receiver.url, services[i], files[i]) });
      },
      async slice(i, server, runLoad) {
        await closing[i];
        const close = await openWindow(i, server);
        await runLoad();
        await sleep(SETTLE_MS);
        closing[i] = sleep(WINDOW_MS - SETTLE_MS).then(close);
        // Awaited at the server's next slice or end; until then a failure must not count as unhandled.
        closing[i].catch(() => undefined);
      },
      async finish(i, server, sum) {
        await closing[i];
        const { mainUs, mainSysUs, mainPreemptions, processUs, mainRunUs, mainWaitUs, served, threads } = sums[i];
        const stopped = await server.stop();
        return {
          service: services[i],
          mainUsPerRequest: mainUs / served,
          mainSysUsPerRequest: mainSysUs / served,
          mainPreemptionsPerRequest: mainPreemptions / served,
          processUsPerRequest: processUs / served,
          // By creation order (ids ascending): the main thread first, then Node's and V8's own, then those the application and tracers start.
          threadUsPerRequest: [...threads.keys()].sort((a, b) => a - b).map((tid) => threads.get(tid) / served),
          ...regimeOf({ mainRunUs, mainWaitUs, seconds: sum.seconds, loadCpuS: sum.loadCpuS }),
          servedInAll: stopped.served,
          handledInAll: stopped.handled,
          otel: stopped.spans,
          session: stopped.session,
        };
      },
    });
  } finally {
    await Promise.allSettled(closing);
    for (const f of files) rmSync(f, { force: true });
  }
}

const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(2)} MiB`;

/** The spans and bytes the receiver counted for each result of one variant, summed over its rounds. */
function received(results, counts) {
  const sum = { requests: 0, wireBytes: 0, bodyBytes: 0, spans: 0, points: 0, logRecords: 0 };
  for (const res of results) for (const k of Object.keys(sum)) sum[k] += counts.services[res.service]?.[k] ?? 0;
  return sum;
}

/** The figures of one Node.js: its cells' results, round by round, and the receiver's counts. */
function reportNode(node, results, counts) {
  console.log(`\n  Node ${node.version} (${node.bin}${node.tree === ROOT ? '' : `, ${node.tree}`})`);
  const perRound = (i, f) => results[i].map((res, k) => f(res, results[OFF][k]));
  const med = (i, f) => median(results[i].map(f));
  console.log(`  ${'variant'.padEnd(26)} ${'req/s'.padStart(7)} ${'vs off (95 % interval)'.padStart(27)} ${'main thread/req'.padStart(15)} ${'process/req'.padStart(12)}   ${REGIME_HEADER}`);
  for (const [i, v] of VARIANTS.entries()) {
    const cols = [
      med(i, (res) => res.reqPerS).toFixed(0).padStart(7),
      (i === OFF ? '' : withInterval(perRound(i, (res, off) => 100 * (res.reqPerS / off.reqPerS - 1)), signedPercent)).padStart(27),
      `${med(i, (res) => res.mainUsPerRequest).toFixed(2)} µs`.padStart(15),
      `${med(i, (res) => res.processUsPerRequest).toFixed(2)} µs`.padStart(12),
      regimeColumns(results[i]),
    ];
    console.log(`  ${v.name.padEnd(26)} ${cols.join(' ')}`);
  }
  const extraMain = (i) => perRound(i, (res, off) => res.mainUsPerRequest - off.mainUsPerRequest);
  const extraProcess = (i) => perRound(i, (res, off) => res.processUsPerRequest - off.processUsPerRequest);
  console.log(`  extra CPU per request over off, median over rounds (95 % interval):`);
  console.log(`    ${''.padEnd(26)} ${'main thread'.padStart(28)} ${'whole process'.padStart(30)}`);
  for (const i of [TRACEPIPE, TRACEPIPE_FILE, FILE_ONLY, OTEL]) console.log(`    ${VARIANTS[i].name.padEnd(26)} ${withInterval(extraMain(i), signedMicros).padStart(28)} ${withInterval(extraProcess(i), signedMicros).padStart(30)}`);
  const minus = (a, b) => a.map((x, k) => x - b[k]);
  console.log(`    tracepipe → OTLP over tracepipe → file, per round:  main thread ${withInterval(minus(extraMain(TRACEPIPE), extraMain(FILE_ONLY)), signedMicros)}, whole process ${withInterval(minus(extraProcess(TRACEPIPE), extraProcess(FILE_ONLY)), signedMicros)}`);
  const ratio = (a, b) => a.map((x, k) => x / b[k]);
  const mainRatio = ratio(extraMain(OTEL), extraMain(TRACEPIPE));
  const processRatio = ratio(extraProcess(OTEL), extraProcess(TRACEPIPE));
  console.log(`    OpenTelemetry / tracepipe → OTLP, per round:   main thread ${withInterval(mainRatio, timesText)}, whole process ${withInterval(processRatio, timesText)}`);
  console.log(`    OpenTelemetry / tracepipe → file + OTLP:       main thread ${withInterval(ratio(extraMain(OTEL), extraMain(TRACEPIPE_FILE)), timesText)}, whole process ${withInterval(ratio(extraProcess(OTEL), extraProcess(TRACEPIPE_FILE)), timesText)}`);

  // Where the CPU goes: each thread, by creation order, where it takes at least 0.5 µs a request.
  console.log('  CPU per request by thread (main first, then in order of creation; median over rounds, those of 0.5 µs or more):');
  for (const [i, v] of VARIANTS.entries()) {
    const most = Math.max(...results[i].map((res) => res.threadUsPerRequest.length));
    const parts = [];
    for (let t = 0; t < most; t++) {
      const x = med(i, (res) => res.threadUsPerRequest[t] ?? 0);
      if (x >= 0.5) parts.push(`${t === 0 ? 'main' : `#${t}`} ${x.toFixed(1)}`);
    }
    console.log(`    ${v.name.padEnd(26)} ${parts.join(', ')} µs`);
  }
  console.log('  the main thread: of its CPU per request, in the kernel; how often it was preempted per 1,000 requests (median over rounds):');
  for (const [i, v] of VARIANTS.entries()) {
    console.log(`    ${v.name.padEnd(26)} ${med(i, (res) => res.mainSysUsPerRequest).toFixed(1)} µs of ${med(i, (res) => res.mainUsPerRequest).toFixed(1)} µs; ${med(i, (res) => 1000 * res.mainPreemptionsPerRequest).toFixed(1)} preemptions`);
  }

  // Every exported span accounted for: the receiver's count, the server's requests, the exporter's own count.
  const total = (i, f) => results[i].reduce((a, res) => a + f(res), 0);
  const checks = [
    saturationCheck(node, results[OFF]),
    {
      check: `Node ${node.version}: OpenTelemetry's extra main-thread CPU per request / tracepipe → OTLP's`,
      value: withInterval(mainRatio, timesText),
      target: `>= ${TARGET_MAIN_RATIO}×`,
      met: median(mainRatio) >= TARGET_MAIN_RATIO,
    },
    { check: `Node ${node.version}: OpenTelemetry's extra whole-process CPU per request / tracepipe → OTLP's`, value: withInterval(processRatio, timesText), met: null },
  ];
  console.log('  OTLP received (decoded by the receiver) and dropped, all rounds:');
  for (const i of [TRACEPIPE, TRACEPIPE_FILE, OTEL]) {
    const r = received(results[i], counts);
    const served = total(i, (res) => res.servedInAll);
    // A pipelined request still in flight when a load ends is handled, never answered: both tracers end its span
    // all the same (its connection closed), so the spans lie between the requests answered and those handled.
    const spansOk = (n, res) => n >= res.servedInAll && n <= res.handledInAll;
    const perRoundExact = results[i].every((res) => spansOk(counts.services[res.service]?.spans ?? 0, res));
    let sent;
    let dropped;
    if (i === OTEL) {
      sent = total(i, (res) => res.otel.exported);
      dropped = `${total(i, (res) => res.otel.failed)} spans in failed exports, ${Math.max(0, served - sent)} requests answered without an exported span`;
    } else {
      sent = total(i, (res) => res.session.otlp.spansSent);
      dropped = `${total(i, (res) => res.session.otlp.spansDropped)} spans and ${total(i, (res) => res.session.otlp.itemsDropped)} items dropped by the OTLP queue, ${total(i, (res) => res.session.eventsDropped)} events dropped by the session`;
    }
    const bytes = `${r.requests} requests, ${mib(r.wireBytes)} on the wire (${mib(r.bodyBytes)} decoded, ${(r.bodyBytes / Math.max(1, r.spans)).toFixed(0)} bytes a span)`;
    console.log(`    ${VARIANTS[i].name}: ${r.spans} spans received for ${served} requests served (${sent} reported sent); ${r.points} metric points, ${r.logRecords} log records; ${bytes}; ${dropped}`);
    const exact = perRoundExact && sent === r.spans && (i === OTEL ? total(i, (res) => res.otel.failed) === 0 : total(i, (res) => res.session.otlp.spansDropped + res.session.eventsDropped) === 0);
    checks.push({ check: `Node ${node.version}, ${VARIANTS[i].name}: spans received = spans sent, one per request answered or handled, none dropped`, value: exact ? 'exact' : `not exact (${r.spans} received, ${served} served, ${sent} sent)`, target: 'exact in every round', met: exact });
  }
  console.log(`    ${VARIANTS[FILE_ONLY].name}: nothing sent (${received(results[FILE_ONLY], counts).requests} requests received); ${total(FILE_ONLY, (res) => res.session.eventsWritten)} events written for ${total(FILE_ONLY, (res) => res.servedInAll)} requests, ${total(FILE_ONLY, (res) => res.session.eventsDropped)} dropped`);
  return checks;
}

/** tracepipe's export stages (drain-stages.mjs) timed over the trace of a Node.Channels server loaded for STAGES_LOAD_S. */
async function reportDrainStages(dir, pin, loader, receiver, node) {
  const file = join(dir, 'stages.tptrace');
  const server = await startJsonServer({ name: 'drain stages', kind: 'plain', node, pin, providers: 'Node.Channels', env: { TRACEPIPE_OUTPUT: file } });
  try {
    await loader.run(server.url, STAGES_LOAD_S);
  } finally {
    await server.stop();
  }
  const s = await drainStages(file, receiver.url, 'drain-stages');
  const perSpan = (x) => `${x.toFixed(2)} µs`;
  console.log(`\n  tracepipe's OTLP export, stage by stage on one thread (the trace of ${s.spans} Node.Channels requests, ${node.version}; on-CPU time, median of 5), per span:`);
  console.log(`    drain thread: read the stream and pair spans ${perSpan(s.usPerSpan.pair)}, encode protobuf ${perSpan(s.usPerSpan.encode)}, gzip ${perSpan(s.usPerSpan.gzip)}; sender thread: post with fetch ${perSpan(s.usPerSpan.post)} (${s.requests} requests)`);
  console.log(`    bytes per span: ${(s.traceBytes / s.spans).toFixed(0)} in the trace, ${(s.protobufBytes / s.spans).toFixed(0)} protobuf, ${(s.gzipBytes / s.spans).toFixed(0)} gzip'd`);
  return { check: 'tracepipe OTLP export per span: read + pair, encode, gzip (drain thread); post (sender thread)', value: [s.usPerSpan.pair, s.usPerSpan.encode, s.usPerSpan.gzip, s.usPerSpan.post].map(perSpan).join(', '), met: null };
}

export async function run() {
  const pin = pinning();
  const load = httpLoad();
  const nodes = nodesToMeasure();
  const cells = nodes.flatMap((node) => VARIANTS.map((variant) => ({ node, variant })));
  if (pin.note) console.log(`  NOT PINNED: ${pin.note}; servers, load, collector and tracing threads share the CPUs`);
  console.log(
    `${ROUNDS} rounds; in each, a fresh server per variant and Node.js (${nodes.map((n) => n.version).join(', ')}), ${pin.note ? 'unpinned' : 'pinned to CPU 0'}, each warmed up for ${WARMUP_S} s, then ` +
      `${MEASURED_S} s of ${load.text} in ${SLICES} slices taking turns in a new order each slice; autocannon and the OTLP receiver ${pin.note ? 'unpinned' : 'on CPU 1'}; CPU from /proc from the start of each slice's load to ${WINDOW_MS} ms after its end`,
  );
  console.log(`  per round and Node.js, main-thread CPU per request of: ${VARIANTS.map((v) => v.name).join(' | ')}`);
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-otlp-bench-'));
  const loader = startLoader(pin, load);
  let receiver;
  const results = cells.map(() => []);
  try {
    receiver = await startReceiver(pin);
    for (let r = 0; r < ROUNDS; r++) {
      for (const [i, res] of (await measureRound(r, dir, pin, loader, receiver, cells)).entries()) results[i].push(res);
      for (const [n, node] of nodes.entries()) {
        const line = VARIANTS.map((_, v) => results[n * VARIANTS.length + v][r].mainUsPerRequest.toFixed(2)).join(' | ');
        console.log(`  round ${r + 1}  Node ${node.version}  ${line} µs  (load average ${loadavg()[0].toFixed(2)})`);
      }
    }
    const stages = await reportDrainStages(dir, pin, loader, receiver, nodes[0]);
    const counts = await receiver.counts();
    if (counts.problems.length > 0) throw new Error(`the OTLP receiver could not take ${counts.problems.length} requests: ${counts.problems[0]}`);
    await loader.close();
    await receiver.close();
    return [...nodes.flatMap((node, n) => reportNode(node, results.slice(n * VARIANTS.length, (n + 1) * VARIANTS.length), counts)), stages];
  } finally {
    loader.kill();
    receiver?.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const c of await run()) console.log(`${c.met === null ? 'info' : c.met ? 'met' : 'MISSED'}: ${c.check}: ${c.value}${c.target ? ` (target ${c.target})` : ''}`);
}
