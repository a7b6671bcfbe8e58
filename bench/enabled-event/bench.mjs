import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, summarize } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';

const VARIANT = fileURLToPath(new URL('./variant.mjs', import.meta.url));
const ROUNDS = 7;
const BATCHES = 7;
// About 25-50 ms per batch for each variant.
const ITERS = { tracepipe: 500_000, 'tracepipe-warm': 500_000, 'tracepipe-ring': 500_000, 'writer-only': 500_000, 'writer-atomic': 500_000, 'writer-closure': 500_000, ideal: 500_000, 'ideal-fresh': 500_000, pino: 20_000 };
const MAX_VS_IDEAL = 1.3;
const MIN_VS_PINO = 35;

export const description = 'issue 2: enabled 4-field event, one session (file, 256 MB, drop), main thread, vs an ideal typed-array write and vs pino';

const perRound = (res, num, den, key = 'nsPerOp') => summarize(res[num].map((r, k) => r[key] / res[den][k][key]));

export async function run() {
  const variants = Object.keys(ITERS);
  console.log(`${ROUNDS} rounds x ${variants.length} variants, each in its own process: ${BATCHES} timed batches after 2 warm-up batches; per process the median batch`);
  const res = await interleavedRounds(ROUNDS, variants, (v) => runVariant(VARIANT, [v, String(ITERS[v]), String(BATCHES)]));
  const ns = Object.fromEntries(variants.map((v) => [v, formatSummary(summarize(res[v].map((r) => r.nsPerOp)))]));
  const haveCpu = variants.every((v) => res[v].every((r) => r.cpuNsPerOp !== null));
  const cold = perRound(res, 'tracepipe', 'ideal');
  const warm = perRound(res, 'tracepipe-warm', 'ideal');
  const coldVsFresh = perRound(res, 'tracepipe', 'ideal-fresh');
  const writer = perRound(res, 'writer-only', 'ideal');
  const atomic = perRound(res, 'writer-atomic', 'writer-only');
  const closure = perRound(res, 'writer-closure', 'writer-only');
  const ring = perRound(res, 'tracepipe-ring', 'tracepipe-warm');
  const pinoVsTp = perRound(res, 'pino', 'tracepipe-warm');
  const pinoVsCold = perRound(res, 'pino', 'tracepipe');
  const pinoVsIdeal = perRound(res, 'pino', 'ideal');
  const sessions = [...res.tracepipe, ...res['tracepipe-warm']];
  const dropped = sessions.reduce((n, r) => n + r.eventsDropped, 0);
  const lost = sessions.filter((r) => r.eventsWritten + r.eventsDropped !== r.eventsAttempted).length;
  console.log('  ns per event (median of per-process medians, min and max over rounds):');
  row('tracepipe, 256 MB session, steady state', `${ns['tracepipe-warm']} ns  (drain catches up between batches)`);
  row('tracepipe, 256 MB session, fresh buffer', `${ns.tracepipe} ns  (batches back to back)`);
  row('tracepipe, 16 MB ring (flight recorder), wrapping', `${ns['tracepipe-ring']} ns`);
  row('tracepipe writer, warm 1 MB target, no session', `${ns['writer-only']} ns  (diagnostic)`);
  row('same writer, published with Atomics.store', `${ns['writer-atomic']} ns  (what arm64 uses; x64 publishes with a plain store)`);
  row('closure writer (no code generation), same target', `${ns['writer-closure']} ns  (what --disallow-code-generation-from-strings gets)`);
  row(`ideal write (${res.ideal[0].recordBytes} B record), 1 MB ring`, `${ns.ideal} ns`);
  row('ideal write, 256 MB ring, first touch', `${ns['ideal-fresh']} ns  (diagnostic)`);
  row(`pino ${res.pino[0].pinoVersion}, sync to /dev/null`, `${ns.pino} ns`);
  console.log('  ratios (per round, then median):');
  row('steady state / ideal', `${formatSummary(warm, 2)} x`);
  row('fresh buffer / ideal', `${formatSummary(cold, 2)} x`);
  row('fresh buffer / ideal on first-touch memory', `${formatSummary(coldVsFresh, 2)} x`);
  row('writer only / ideal', `${formatSummary(writer, 2)} x`);
  row('Atomics.store publish / plain store publish', `${formatSummary(atomic, 2)} x`);
  row('closure writer / generated writer', `${formatSummary(closure, 2)} x`);
  row('ring (flight recorder) / Drop, steady state', `${formatSummary(ring, 2)} x`);
  row('pino / tracepipe steady state', `${formatSummary(pinoVsTp, 1)} x faster`);
  row('pino / tracepipe fresh buffer', `${formatSummary(pinoVsCold, 1)} x faster`);
  row('pino / ideal (the most any writer could reach)', `${formatSummary(pinoVsIdeal, 1)} x`);
  const cpuChecks = [];
  if (haveCpu) {
    const cpu = (v) => formatSummary(summarize(res[v].map((r) => r.cpuNsPerOp)));
    const warmCpu = perRound(res, 'tracepipe-warm', 'ideal', 'cpuNsPerOp');
    const coldCpu = perRound(res, 'tracepipe', 'ideal', 'cpuNsPerOp');
    console.log("  the main thread's on-CPU ns per event (time it waited for a CPU left out):");
    row('tracepipe, steady state', `${cpu('tracepipe-warm')} ns`);
    row('tracepipe, fresh buffer', `${cpu('tracepipe')} ns`);
    row('ideal write, 1 MB ring', `${cpu('ideal')} ns`);
    row('steady state / ideal, on-CPU', `${formatSummary(warmCpu, 2)} x`);
    row('fresh buffer / ideal, on-CPU', `${formatSummary(coldCpu, 2)} x`);
    const closureCpu = perRound(res, 'writer-closure', 'writer-only', 'cpuNsPerOp');
    row('writer only, generated / closure', `${cpu('writer-only')} / ${cpu('writer-closure')} ns`);
    row('closure writer / generated writer, on-CPU', `${formatSummary(closureCpu, 2)} x`);
    const pinoCpu = perRound(res, 'pino', 'tracepipe-warm', 'cpuNsPerOp');
    row('pino / tracepipe steady state, on-CPU', `${formatSummary(pinoCpu, 1)} x faster`);
    cpuChecks.push(
      { check: 'pino / enabled event (steady state), on-CPU', value: `${pinoCpu.median.toFixed(1)}x faster`, target: `>= ${MIN_VS_PINO}x`, met: pinoCpu.median >= MIN_VS_PINO },
      { check: 'enabled event / ideal write, steady state, on-CPU', value: `${warmCpu.median.toFixed(2)}x`, target: `<= ${MAX_VS_IDEAL}x`, met: warmCpu.median <= MAX_VS_IDEAL },
      { check: 'enabled event / ideal write, fresh 256 MB buffer, on-CPU', value: `${coldCpu.median.toFixed(2)}x`, target: `<= ${MAX_VS_IDEAL}x`, met: coldCpu.median <= MAX_VS_IDEAL },
    );
  }
  row('sessions: eventsDropped (all runs)', `${dropped}; written + dropped != attempted in ${lost} of ${sessions.length} runs`);
  const okWarm = warm.median <= MAX_VS_IDEAL;
  const okCold = cold.median <= MAX_VS_IDEAL;
  const okPino = pinoVsTp.median >= MIN_VS_PINO;
  console.log(`  target <= ${MAX_VS_IDEAL}x ideal: steady state ${okWarm ? 'MET' : 'MISSED'}, fresh buffer ${okCold ? 'MET' : 'MISSED'}; >= ${MIN_VS_PINO}x faster than pino: ${okPino ? 'MET' : 'MISSED'}`);
  return [
    { check: 'enabled event / ideal write, steady state', value: `${warm.median.toFixed(2)}x`, target: `<= ${MAX_VS_IDEAL}x`, met: okWarm },
    { check: 'enabled event / ideal write, fresh 256 MB buffer', value: `${cold.median.toFixed(2)}x`, target: `<= ${MAX_VS_IDEAL}x`, met: okCold },
    ...cpuChecks,
    { check: 'pino / enabled event (steady state)', value: `${pinoVsTp.median.toFixed(1)}x faster (pino / ideal: ${pinoVsIdeal.median.toFixed(1)}x)`, target: `>= ${MIN_VS_PINO}x`, met: okPino },
    { check: 'ring mode / Drop mode, per event (steady state)', value: `${ring.median.toFixed(2)}x`, target: 'the same within noise (<= 1.15x)', met: ring.median <= 1.15 },
    { check: 'publishing with Atomics.store / plain store (writer only)', value: `${atomic.median.toFixed(2)}x`, target: '', met: null },
    { check: 'closure writer / generated writer (writer only)', value: `${closure.median.toFixed(2)}x`, target: '', met: null },
    { check: 'enabled event sessions: eventsDropped', value: String(dropped), target: '0', met: dropped === 0 && lost === 0 },
  ];
}
