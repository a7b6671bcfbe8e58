// Issue 29's parts of a traced request (and issue 28's OTLP export) counted in instructions, which other
// processes on a shared machine cannot move: the HTTP server of http-overhead, each variant in a fresh
// process under Valgrind's callgrind, which counts the instructions each thread executes in user space.
// The server warms up uninstrumented (Valgrind's core alone), counting is switched on from outside
// (`callgrind_control`) while requests keep coming, and the server itself zeroes the counts where its
// measured requests begin and dumps them where they end (WINDOW_MARKS): the window is exactly the
// requests it counts, and the load never pauses for a control command (a server idle for the seconds
// one takes under Valgrind is one V8's memory reducer may shrink; NODE_FLAGS turns it off too). Both
// loads go over the same keep-alive
// connections, and V8's hashes and random numbers are seeded (NODE_FLAGS): the count of a variant is then
// the same in every fresh process within ~0.3 %, where new connections for the measured window (V8
// deoptimising and recompiling Node's http code in it) moved it by 1–4 % (BENCHMARKS.md §6).
// V8 compiles and collects partly on its own threads, so the main thread's count leaves out the part
// done there; `--single-threaded` would count it on the main thread but made Node 24's V8 recompile
// without end (~190,000 instructions a request of TurboFan in the window, against ~600 without it).
// The figure is the main thread's, the one that serves every request and runs the application, where
// its CPU time per request moves ±15 % between fresh processes (BENCHMARKS.md §6). What it does not
// measure, and why http-overhead stays the measure of time: the kernel's work (system calls, wake-ups);
// and work paced by the clock rather than by requests (a drain pass, a sampler's timer), which
// Valgrind's ~50× slower requests inflate per request; so the other threads (the drain's passes, V8's
// compiler threads) are not counted (the window's dump is the thread that marks it, the main thread's),
// and `Runtime.*` on top is mostly its samplers' timers here.
// The µs beside a count are an estimate: the count at the untraced server's user-mode pace, its main
// thread's user-mode CPU time per request over its instructions per request, timed outside Valgrind in
// the same run (untracedPace); at its whole CPU time per instruction, kernel included, an upper bound.
// Needs `valgrind` (Debian: valgrind). Run alone: `node bench/run.mjs http-instructions`;
// BENCH_NODES as in http-overhead adds Node.js versions.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { nodesToMeasure, startJsonServer } from '../support/pinned-http.mjs';
import { keepAliveLoad } from '../support/keep-alive-load.mjs';
import { median, narrow, timesText, withInterval } from '../support/stats.mjs';
import { wholeFromEnv } from '../support/whole-from-env.mjs';
import { shuffled } from '../support/sliced-rounds.mjs';
import { CHANNELS, countChecks, EVENT, finishServer, FULL, HOOKS, OFF, OTEL, PARTS, SPANS, TARGET_EVENT_US, TARGET_OTEL_RATIO, VARIANTS as HTTP_VARIANTS } from '../support/http-variants.mjs';
import { startReceiver } from '../otlp/bench.mjs';

// BENCH_INSTR_ROUNDS: 6 is the fewest that give a 95 % interval of the median.
const ROUNDS = wholeFromEnv('BENCH_INSTR_ROUNDS', 6);
// Servers run side by side (BENCH_INSTR_JOBS), in a new seeded order each round: a server's count moved
// by 0.5 % with another one beside it (how many requests a loop turn finds depends a little on its pace).
const JOBS = wholeFromEnv('BENCH_INSTR_JOBS', Math.max(1, cpus().length));
// Enough for V8 to have optimised what a request runs before the count starts.
const WARMUP_REQUESTS = 10000;
const MEASURED_REQUESTS = 2000;
/** After the load, before the count stops: work a tracer defers (a drain pass) is counted with its requests. */
const SETTLE_MS = 500;
/** Requests served after counting is on, before the window: Valgrind retranslates the code it runs first. */
const INSTRUMENTED_WARMUP_REQUESTS = 1000;
/**
 * The functions json-server calls at 'mark' and 'measured' under BENCH_CALLGRIND_WINDOW (Node's own
 * v8.cachedDataVersionTag() and v8.getHeapCodeStatistics(), which no variant calls otherwise): callgrind
 * zeroes the counts on entering the first and dumps them on entering the second, of the thread that
 * calls them (the main thread's: the only one this bench counts).
 */
const WINDOW_MARKS = ['--zero-before=node::v8_utils::CachedDataVersionTag*', '--dump-before=node::v8_utils::UpdateHeapCodeStatisticsBuffer*'];
// One request in flight per connection: how many requests a loop turn finds depends less on timing than with pipelining.
const CONNECTIONS = 10;
/** Bounds a load of the server under Valgrind: ≥ 20 requests a second. */
const LOAD_TIMEOUT_S = WARMUP_REQUESTS / 20;
/**
 * Seeded hashes and random numbers: a fresh process lays out its hash tables and draws its ids the same
 * way. No memory reducer: it judges a process idle by its allocation rate in wall time, which Valgrind's
 * slowdown cuts ~50×, and it shrank the young generation of a busy server (the OTLP server's: 20–23
 * scavenges in the counted 2,000 requests against 12 outside Valgrind, +3,000 to +7,000 instructions a
 * request). Outside Valgrind the flag leaves a loaded server's scavenges as they are (BENCHMARKS.md §6).
 */
const NODE_FLAGS = ['--random-seed=1', '--hash-seed=1', '--no-memory-reducer'];
const TARGET_INTERVAL = 0.25;
// Issue 28's comparison, counted the same way: every span exported over OTLP/HTTP protobuf to a local
// collector (otlp/receiver.mjs), by tracepipe's drain thread or by OpenTelemetry's SDK and exporter.
const TARGET_OTLP_MAIN_RATIO = 10;
const OTLP_TRACEPIPE = HTTP_VARIANTS.length;
const OTLP_OTEL = OTLP_TRACEPIPE + 1;
// The request event's cost split in two: loading tracepipe into the process at all (Node's http code
// then runs less specifically optimised, for a cause not found: BENCHMARKS.md §6), and the event's own
// work with a session running.
const LOADED = OTLP_TRACEPIPE + 2;
// The baselines every tracer's extra is counted over: the untraced server, and Node's hooks, each with
// one AsyncLocalStorage made (support/async-local-storage-made.mjs), as every tracer makes one.
const OFF_ALS = OTLP_TRACEPIPE + 3;
const HOOKS_ALS = OTLP_TRACEPIPE + 4;
const ALS_MADE = new URL('../support/async-local-storage-made.mjs', import.meta.url).href;
const VARIANTS = [
  ...HTTP_VARIANTS,
  { name: 'tracepipe → OTLP (Node.Channels)', server: 'plain', providers: 'Node.Channels', otlp: true },
  { name: 'OpenTelemetry SDK → OTLP', server: 'opentelemetry-otlp' },
  { name: "Node's hooks, tracepipe/register loaded, no session", server: 'node-hooks', register: true },
  { name: 'off, an AsyncLocalStorage made', server: 'plain', imports: ALS_MADE },
  { name: "Node's hooks, an AsyncLocalStorage made", server: 'node-hooks', imports: ALS_MADE },
];

export const description = "issues 29, 28: instructions per request of the pinned HTTP server's variants under Valgrind (no other process can move them), split into parts, per Node.js version";

function valgrindMissing() {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['-h'], { stdio: 'ignore' });
    return undefined;
  } catch (e) {
    return `valgrind or callgrind_control cannot run (${e.code ?? e.message}); install valgrind (Debian: apt-get install valgrind)`;
  }
}

const execFileAsync = promisify(execFile);
/** A callgrind_control command to process `pid` (it says nothing of a failure: the dump's counts are checked instead). */
const control = (dir, pid, ...args) => execFileAsync('callgrind_control', [`--vgdb-prefix=${join(dir, 'vgdb')}`, ...args, String(pid)], { timeout: 60_000 });

/** The end of a Valgrind log, for an error message (the run's directory goes when it ends). */
function logTail(dir, pid) {
  try {
    return readFileSync(join(dir, `vg.${pid}.log`), 'utf8').trim().split('\n').slice(-5).join(' | ');
  } catch {
    return 'no log';
  }
}

/**
 * The main thread's instructions in the measured window: the first dump callgrind wrote for `pid`
 * (`--dump-before` dumps the thread that calls the marked function, the server's main thread as it
 * answers 'measured'; the dump at exit is not the window).
 */
function dumpedInstructions(dir, pid) {
  const files = readdirSync(dir).filter((f) => f.startsWith(`cg.${pid}.`) || f.startsWith(`cg.${pid}-`));
  if (!files.some((f) => f === `cg.${pid}.1-01`)) throw new Error(`callgrind wrote no dump of the main thread of process ${pid} (its log: ${logTail(dir, pid)})`);
  let main = 0;
  for (const f of files) {
    const text = readFileSync(join(dir, f), 'utf8');
    rmSync(join(dir, f));
    if (f !== `cg.${pid}.1-01`) continue;
    const m = /^(?:summary|totals): (\d+)/m.exec(text);
    if (!m) throw new Error(`${f}: no instruction total`);
    main = Number(m[1]);
  }
  // callgrind_control reports no failure: counting that never started shows here.
  if (main === 0) throw new Error(`process ${pid}: the main thread counted no instructions (counting not switched on? ${logTail(dir, pid)})`);
  return main;
}

/** One variant on one Node.js in a fresh process under callgrind: instructions per request served in the measured window. */
async function countCell(dir, receiverUrl, { node, variant }, id) {
  const vg = ['valgrind', '--tool=callgrind', `--vgdb-prefix=${join(dir, 'vgdb')}`, '--instr-atstart=no', ...WINDOW_MARKS, '--separate-threads=yes', '--dump-instr=no', '--dump-line=no', `--callgrind-out-file=${join(dir, 'cg.%p')}`, `--log-file=${join(dir, 'vg.%p.log')}`];
  const traceFile = join(dir, `http-${id}.tptrace`);
  const output = variant.otlp ? { TRACEPIPE_OTLP_ENDPOINT: receiverUrl } : variant.server === 'opentelemetry-otlp' ? { OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl } : variant.providers ? { TRACEPIPE_OUTPUT: traceFile } : {};
  const env = { ...output, BENCH_CALLGRIND_WINDOW: '1' };
  const server = await startJsonServer({ name: variant.name, kind: variant.server, node, pin: { server: vg }, providers: variant.providers, env, nodeFlags: [...NODE_FLAGS, ...(variant.imports ? [`--import=${variant.imports}`] : [])], register: variant.register });
  const pid = server.child.pid;
  let load;
  try {
    load = await keepAliveLoad(server.url, { connections: CONNECTIONS, timeoutS: LOAD_TIMEOUT_S });
    await load.run(WARMUP_REQUESTS);
    let on = false;
    const switching = control(dir, pid, '--instr=on').finally(() => (on = true));
    while (!on) await load.run(CONNECTIONS);
    await switching;
    await load.run(INSTRUMENTED_WARMUP_REQUESTS);
    // The server zeroes the counts as it marks, and dumps them as it answers 'measured' (WINDOW_MARKS).
    await server.ask('mark');
    await load.run(MEASURED_REQUESTS);
    await sleep(SETTLE_MS);
    const { served } = await server.ask('measured');
    const finished = variant.otlp || variant.server === 'opentelemetry-otlp' ? otlpFinished(variant, await server.stop()) : await finishServer(variant, server, traceFile);
    return { ...finished, main: dumpedInstructions(dir, pid) / served };
  } finally {
    load?.close();
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
    rmSync(traceFile, { force: true });
  }
}

/**
 * An OTLP variant's export, checked by what its exporter says it sent (the otlp benchmark also decodes
 * what the collector received): every request served has its span sent, none dropped or failed.
 */
function otlpFinished(variant, { served, handled, spans, session }) {
  if (variant.otlp) {
    const o = session?.otlp;
    if (!o || session.eventsDropped !== 0 || o.spansDropped !== 0 || o.itemsDropped !== 0 || o.spansSent < served || o.spansSent > handled) {
      throw new Error(`${variant.name}: ${o ? `${o.spansSent} spans sent, ${o.spansDropped} dropped, ${o.itemsDropped} items dropped` : 'no OTLP export figures'}, ${session?.eventsDropped} events dropped, for ${served} requests served`);
    }
  } else if (spans.failed !== 0 || spans.exported < served || spans.exported > handled) {
    throw new Error(`${variant.name}: ${spans.exported} spans exported, ${spans.failed} failed, for ${served} requests served`);
  }
  return { served };
}

/** Requests the untraced server is timed over: enough clock ticks (10 ms) of user and kernel time for their ratio. */
const PACE_REQUESTS = 40_000;

/**
 * The untraced server's main-thread CPU time per request outside Valgrind, and the share of it spent in
 * user mode: what turns its instructions into µs. Callgrind counts user-mode instructions only, while a
 * request's CPU time also holds the kernel's work for it (its read, its write, the loop's poll: ~40 % of
 * it here, BENCHMARKS.md §6), which a tracer that makes no system call per request does not add to. So
 * the time of an extra instruction is the user-mode time per instruction; the whole CPU time per
 * instruction (kernel included) is an upper bound on it.
 */
async function untracedPace(node) {
  const server = await startJsonServer({ name: 'off (timed)', kind: 'plain', node, pin: {}, nodeFlags: NODE_FLAGS });
  let load;
  try {
    load = await keepAliveLoad(server.url, { connections: CONNECTIONS });
    await load.run(WARMUP_REQUESTS);
    await server.ask('mark');
    await load.run(PACE_REQUESTS);
    const { main, served } = await server.ask('measured');
    await server.stop();
    if (main.runUs === null) throw new Error("the untraced server cannot read its main thread's CPU time (no /proc/thread-self/schedstat)");
    const ticks = main.userTicks + main.systemTicks;
    if (!(ticks > 0)) throw new Error("the untraced server cannot read its main thread's user and kernel time (/proc/thread-self/stat)");
    return { cpuUs: main.runUs / served, userShare: main.userTicks / ticks };
  } finally {
    load?.close();
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  }
}

/** Runs `tasks` (functions returning promises) in `order`, at most `jobs` at once; results by task. After a failure no task starts, and it is thrown once the running ones end. */
async function pool(tasks, order, jobs) {
  const results = new Array(tasks.length);
  let next = 0;
  let failed = false;
  const settled = await Promise.allSettled(Array.from({ length: Math.min(jobs, tasks.length) }, async () => {
    while (next < order.length && !failed) {
      const i = order[next++];
      try {
        results[i] = await tasks[i]();
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  }));
  const error = settled.find((r) => r.status === 'rejected');
  if (error) throw error.reason;
  return results;
}

const signedIr = (x) => `${x >= 0 ? '+' : ''}${Math.round(x).toLocaleString('en-US')}`;
const irText = (x) => Math.round(x).toLocaleString('en-US');
function reportNode(node, results, pace) {
  const nsPerIr = pace.userNsPerIr;
  const us = (ir) => `≈ ${((ir * nsPerIr) / 1000).toFixed(2)} µs`;
  const checks = [];
  {
    console.log(
      `\n  Node ${node.version} (${node.bin}), the main thread: instructions per request, median over ${ROUNDS} rounds (min, max); µs at the untraced server's user-mode pace, ` +
        `${nsPerIr.toFixed(3)} ns an instruction (${(100 * pace.userShare).toFixed(0)} % of its CPU time in user mode; ${pace.cpuNsPerIr.toFixed(3)} ns with the kernel's share, an upper bound)`,
    );
    for (const [i, v] of VARIANTS.entries()) {
      const irs = results[i].map((r) => r.main);
      console.log(`    ${v.name.padEnd(42)} ${irText(median(irs)).padStart(9)} (${irText(Math.min(...irs))}, ${irText(Math.max(...irs))})  ${us(median(irs))}`);
    }
    /** Per round, the main thread's extra instructions per request of variant `of` over `base`. */
    const over = (of, base = OFF) => results[of].map((r, k) => r.main - results[base][k].main);
    const part = (p) => over(p.of, p.over);
    const ratio = (a, b) => a.map((x, k) => x / b[k]);
    console.log('  extra instructions per request on the main thread, median over rounds (95 % interval):');
    for (const p of PARTS) console.log(`    ${p.name.padEnd(48)} ${withInterval(part(p), signedIr).padEnd(34)} ${us(median(part(p)))}${p.of === FULL ? " (mostly its samplers' timers, inflated here)" : ''}`);
    console.log(`    an AsyncLocalStorage made, over off ${withInterval(over(OFF_ALS), signedIr)}; over Node's hooks ${withInterval(over(HOOKS_ALS, HOOKS), signedIr)}`);
    // What the checks use: each tracer over the baseline with an AsyncLocalStorage made, as it makes one.
    console.log("  the same over the baselines with an AsyncLocalStorage made (each tracer makes one): what the checks use");
    const channels = over(CHANNELS, OFF_ALS);
    const otel = over(OTEL, OFF_ALS);
    const ratios = ratio(otel, channels);
    const event = over(EVENT, HOOKS_ALS);
    const eventUs = event.map((ir) => (ir * nsPerIr) / 1000);
    console.log(`    the request event over Node's hooks ${withInterval(event, signedIr).padEnd(34)} ${us(median(event))} (≤ ${((median(event) * pace.cpuNsPerIr) / 1000).toFixed(2)} µs with the kernel's share)`);
    console.log(`      of it: tracepipe/register loaded, no session ${withInterval(over(LOADED, HOOKS_ALS), signedIr)}; the event with its session over that ${withInterval(over(EVENT, LOADED), signedIr)}`);
    console.log(`    all of Node.Channels with spans ${withInterval(channels, signedIr)}; with context=sync ${withInterval(over(SPANS, OFF_ALS), signedIr)}; OpenTelemetry ${withInterval(otel, signedIr)}`);
    const sync = ratio(otel, over(SPANS, OFF_ALS));
    console.log(`    OpenTelemetry / Node.Channels with spans, per round  ${withInterval(ratios, timesText)}; with context=sync ${withInterval(sync, timesText)}`);
    const otlpRatios = ratio(over(OTLP_OTEL, OFF_ALS), over(OTLP_TRACEPIPE, OFF_ALS));
    console.log(`    exporting every span over OTLP: tracepipe ${withInterval(over(OTLP_TRACEPIPE, OFF_ALS), signedIr)}, OpenTelemetry ${withInterval(over(OTLP_OTEL, OFF_ALS), signedIr)}; OpenTelemetry / tracepipe ${withInterval(otlpRatios, timesText)}`);
    checks.push(
      {
        check: `Node ${node.version}, main thread: OpenTelemetry's extra instructions per request / Node.Channels with spans'`,
        value: withInterval(ratios, timesText),
        target: `>= ${TARGET_OTEL_RATIO}×`,
        met: median(ratios) >= TARGET_OTEL_RATIO,
      },
      {
        check: `Node ${node.version}, main thread: OpenTelemetry SDK → OTLP's extra instructions per request / tracepipe → OTLP's (issue 28)`,
        value: withInterval(otlpRatios, timesText),
        target: `>= ${TARGET_OTLP_MAIN_RATIO}×`,
        met: median(otlpRatios) >= TARGET_OTLP_MAIN_RATIO,
      },
      {
        check: `Node ${node.version}, main thread: the request event over Node's hooks with empty handlers (an AsyncLocalStorage made), at the untraced user-mode pace`,
        value: withInterval(eventUs, (x) => `${x >= 0 ? '+' : ''}${x.toFixed(2)} µs`),
        target: `<= ${TARGET_EVENT_US} µs`,
        met: median(eventUs) <= TARGET_EVENT_US,
      },
      {
        check: `Node ${node.version}, main thread: 95 % interval of Node.Channels with spans' extra instructions per request`,
        value: withInterval(channels, signedIr),
        target: `within ±${100 * TARGET_INTERVAL}% of the median`,
        met: narrow(channels, TARGET_INTERVAL),
      },
    );
  }
  return [...checks, ...countChecks(node, results)];
}

export async function run() {
  const missing = valgrindMissing();
  if (missing) return [{ check: 'http-instructions', value: `not run: ${missing}`, target: 'report it', met: null }];
  if (ROUNDS < 6) throw new Error(`BENCH_INSTR_ROUNDS=${ROUNDS}: a 95 % interval of the median needs at least 6 rounds`);
  const nodes = nodesToMeasure();
  const cells = nodes.flatMap((node) => VARIANTS.map((variant) => ({ node, variant })));
  console.log(
    `${ROUNDS} rounds; in each, a fresh server per variant and Node.js (${nodes.map((n) => n.version).join(', ')}) under callgrind, ${JOBS} at a time in a new order each round: ` +
      `${WARMUP_REQUESTS} requests uncounted, then ${MEASURED_REQUESTS} counted over the same ${CONNECTIONS} keep-alive connections, one request in flight on each, and ${SETTLE_MS} ms after them; node ${NODE_FLAGS.join(' ')}`,
  );
  const results = cells.map(() => []);
  let dir;
  let receiver;
  try {
    dir = mkdtempSync(join(tmpdir(), 'tracepipe-http-instructions-'));
    receiver = await startReceiver({});
    // Timed first, alone on the machine: the pace per Node.js (fresh processes, median of 3).
    const pace = [];
    for (const node of nodes) {
      const timed = [];
      for (let k = 0; k < 3; k++) timed.push(await untracedPace(node));
      pace.push({ cpuUs: median(timed.map((t) => t.cpuUs)), userShare: median(timed.map((t) => t.userShare)) });
    }
    for (let r = 0; r < ROUNDS; r++) {
      const tasks = cells.map((cell, i) => () => countCell(dir, receiver.url, cell, `${r}-${i}`));
      for (const [i, res] of (await pool(tasks, shuffled(cells.length, r), JOBS)).entries()) results[i].push(res);
      for (const [n, node] of nodes.entries()) {
        const line = VARIANTS.map((_, v) => irText(results[n * VARIANTS.length + v][r].main)).join(' | ');
        console.log(`  round ${r + 1}  Node ${node.version}  main thread ${line} instructions a request  (load average ${loadavg()[0].toFixed(2)})`);
      }
    }
    await receiver.close();
    return nodes.flatMap((node, n) => {
      const res = results.slice(n * VARIANTS.length, (n + 1) * VARIANTS.length);
      const cpuNsPerIr = (pace[n].cpuUs * 1000) / median(res[OFF].map((x) => x.main));
      return reportNode(node, res, { cpuNsPerIr, userShare: pace[n].userShare, userNsPerIr: cpuNsPerIr * pace[n].userShare });
    });
  } finally {
    receiver?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const c of await run()) console.log(`${c.met === null ? 'info' : c.met ? 'met' : 'MISSED'}: ${c.check}: ${c.value} (target ${c.target})`);
}
