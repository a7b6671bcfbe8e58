import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const VARIANT = fileURLToPath(new URL('./variant.mjs', import.meta.url));
const DISABLED_VARIANT = fileURLToPath(new URL('./disabled-variant.mjs', import.meta.url));
const ROUNDS = 5;
const BATCHES = 7;
// About 20-60 ms per batch for each variant.
const ITERS = { 'span-pair': 200_000, 'event-pair': 200_000, 'lite-pair': 200_000, 'run-sync': 200_000, 'run-async': 100_000, 'await-only': 100_000, 'run-async-pending': 100_000, 'await-pending-only': 100_000, 'await-beside-span': 100_000, otel: 20_000 };
const DISABLED_ITERS = 50_000_000;
const MIN_VS_OTEL = 20;
const DISABLED_TARGET_NS = 2;

export const description = 'issue 12: enabled span begin+end and run (sync, async) vs OpenTelemetry SDK spans and a plain event pair; disabled run(fn) vs fn()';

const perRound = (res, num, den, key = 'nsPerOp') => summarize(res[num].map((r, k) => r[key] / res[den][k][key]));

/** The variants a promise's span changes, run on this build and on `before` side by side (issue 21). */
const PROMISE_VARIANTS = ['run-async', 'await-only', 'run-async-pending', 'await-pending-only', 'await-beside-span'];

/**
 * TRACEPIPE_BENCH_BEFORE=<a built checkout with this bench/spans copied in>: PROMISE_VARIANTS run
 * there and here, alternating, per round; on-CPU ns per operation.
 */
async function compareWithBefore(before) {
  const trees = { before: resolve(before, 'bench/spans/variant.mjs'), after: VARIANT };
  console.log(`  before (${before}) and after, ${ROUNDS} rounds, on-CPU ns per operation:`);
  const names = PROMISE_VARIANTS.flatMap((v) => [`${v} before`, `${v} after`]);
  const res = await interleavedRounds(ROUNDS, names, (n) => {
    const [v, tree] = n.split(' ');
    return runVariant(trees[tree], [v, String(ITERS[v]), String(BATCHES)]);
  });
  const checks = [];
  for (const v of PROMISE_VARIANTS) {
    const b = summarize(res[`${v} before`].map((r) => r.cpuNsPerOp));
    const a = summarize(res[`${v} after`].map((r) => r.cpuNsPerOp));
    row(v, `before ${formatSummary(b, 0)}, after ${formatSummary(a, 0)}`);
    checks.push({ check: `${v}: on-CPU ns before / after`, value: `${b.median.toFixed(0)} / ${a.median.toFixed(0)}`, target: '', met: null });
  }
  return checks;
}

export async function run() {
  const variants = Object.keys(ITERS);
  console.log(`${ROUNDS} rounds x ${variants.length} variants, each in its own process: ${BATCHES} timed batches after 2 warm-up batches, the drain catching up between batches; per process the median batch`);
  const res = await interleavedRounds(ROUNDS, variants, (v) => runVariant(VARIANT, [v, String(ITERS[v]), String(BATCHES)]));
  const ns = (v, key = 'nsPerOp') => formatSummary(summarize(res[v].map((r) => r[key])));
  const haveCpu = variants.every((v) => res[v].every((r) => r.cpuNsPerOp !== null));
  // On a busy machine wall time includes waiting for a CPU; the main thread's on-CPU time does not.
  const both = (v) => `${ns(v)} ns${haveCpu ? `; on-CPU ${ns(v, 'cpuNsPerOp')} ns` : ''}`;
  const o = res.otel[0];
  console.log('  ns per span, wall and on-CPU (median of per-process medians, min and max over rounds):');
  row('span begin + end', both('span-pair'));
  row('run(fn), fn synchronous', both('run-sync'));
  row('await run(asyncFn)', both('run-async'));
  row('await asyncFn(), no span', both('await-only'));
  row('await run(asyncFn), asyncFn pending at return', both('run-async-pending'));
  row('await asyncFn(), pending at return, no span', both('await-pending-only'));
  row('the same, while a span waits on another promise', both('await-beside-span'));
  row('tracepipe/lite span begin + end (host adopted it)', both('lite-pair'));
  row('plain event pair, same fields', both('event-pair'));
  row(`OpenTelemetry sdk-trace-base ${o.otelVersion} (api ${o.apiVersion})`, both('otel'));
  console.log('    (OpenTelemetry: startSpan with one attribute, setAttribute, end; SimpleSpanProcessor, InMemorySpanExporter)');
  const ratios = (key) => ({
    vsOtel: perRound(res, 'otel', 'span-pair', key),
    runVsOtel: perRound(res, 'otel', 'run-sync', key),
    vsPair: perRound(res, 'span-pair', 'event-pair', key),
    liteVsFull: perRound(res, 'lite-pair', 'span-pair', key),
    asyncExtra: summarize(res['run-async'].map((r, k) => r[key] - res['await-only'][k][key])),
    pendingExtra: summarize(res['run-async-pending'].map((r, k) => r[key] - res['await-pending-only'][k][key])),
    besideExtra: summarize(res['await-beside-span'].map((r, k) => r[key] - res['await-pending-only'][k][key])),
  });
  const printRatios = (r, what) => {
    console.log(`  ratios, ${what} (per round, then median):`);
    row('OpenTelemetry / span begin + end', `${formatSummary(r.vsOtel, 1)} x`);
    row('OpenTelemetry / run(fn) sync', `${formatSummary(r.runVsOtel, 1)} x`);
    row('span begin + end / plain event pair', `${formatSummary(r.vsPair, 2)} x`);
    row('lite span / full span', `${formatSummary(r.liteVsFull, 2)} x`);
    row('await run(asyncFn) - await asyncFn()', `${formatSummary(r.asyncExtra, 0)} ns`);
    row('the same, asyncFn pending at return', `${formatSummary(r.pendingExtra, 0)} ns`);
    row('an await beside a pending span - without', `${formatSummary(r.besideExtra, 0)} ns`);
  };
  const wall = ratios('nsPerOp');
  printRatios(wall, 'wall');
  const cpu = haveCpu ? ratios('cpuNsPerOp') : undefined;
  if (cpu) printRatios(cpu, 'on-CPU');
  const { vsOtel, runVsOtel, vsPair, asyncExtra, pendingExtra, besideExtra } = wall;
  const sessions = variants.filter((v) => res[v][0].eventsAttempted !== undefined).flatMap((v) => res[v]);
  const dropped = sessions.reduce((n, r) => n + r.eventsDropped, 0);
  const lost = sessions.filter((r) => r.eventsWritten + r.eventsDropped !== r.eventsAttempted).length;
  row('sessions: eventsDropped (all runs)', `${dropped}; written + dropped != attempted in ${lost} of ${sessions.length} runs`);

  const before = process.env.TRACEPIPE_BENCH_BEFORE;
  const compared = before ? await compareWithBefore(before) : [];

  console.log(`  disabled: ${ROUNDS} rounds x 2 variants, ${BATCHES} batches of ${DISABLED_ITERS / 1e6}M calls after warm-up`);
  const dis = await interleavedRounds(ROUNDS, ['direct', 'run'], (v) => runVariant(DISABLED_VARIANT, [v, String(DISABLED_ITERS), String(BATCHES)]));
  const direct = summarize(dis.direct.map((r) => r.nsPerOp));
  const disabledRun = summarize(dis.run.map((r) => r.nsPerOp));
  const diffs = summarize(dis.run.map((r, k) => r.nsPerOp - dis.direct[k].nsPerOp));
  row('fn() directly', `${formatSummary(direct, 2)} ns/call`);
  row('Query.run(fn, sql), no session', `${formatSummary(disabledRun, 2)} ns/call`);
  row('difference per round', `${formatSummary(diffs, 2)} ns/call`);
  const okOtel = vsOtel.median >= MIN_VS_OTEL;
  const okDisabled = Math.abs(diffs.median) <= DISABLED_TARGET_NS;
  const cpuNote = cpu ? `; on-CPU ${cpu.vsOtel.median.toFixed(1)}x (run sync: ${cpu.runVsOtel.median.toFixed(1)}x)` : '';
  return [
    { check: 'OpenTelemetry span / enabled span begin+end', value: `${vsOtel.median.toFixed(1)}x (run sync: ${runVsOtel.median.toFixed(1)}x)${cpuNote}`, target: `>= ${MIN_VS_OTEL}x`, met: okOtel },
    { check: 'enabled span begin+end / plain event pair', value: `${vsPair.median.toFixed(2)}x`, target: '', met: null },
    { check: 'await run(asyncFn) - await asyncFn()', value: `${asyncExtra.median.toFixed(0)} ns (asyncFn pending at return: ${pendingExtra.median.toFixed(0)} ns)`, target: '', met: null },
    { check: 'an await beside a span pending on a promise - without', value: `${besideExtra.median.toFixed(0)} ns`, target: '', met: null },
    { check: 'disabled run(fn) - fn()', value: `${diffs.median.toFixed(2)} ns/call`, target: `<= ${DISABLED_TARGET_NS} ns`, met: okDisabled },
    { check: 'span sessions: eventsDropped', value: String(dropped), target: '0', met: dropped === 0 && lost === 0 },
    ...compared,
  ];
}
