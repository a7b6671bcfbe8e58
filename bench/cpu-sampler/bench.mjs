import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { reapedChildrenCpuMs } from '../support/child-cpu.mjs';
import { formatSummary, median, summarize, withInterval } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';
import { readTrace } from '../../dist/index.js';

const REGISTER = new URL('../../dist/register.js', import.meta.url).href;
// Two real programs at the ends of what sampling costs: deep recursion that never yields, and a web
// server whose loop turns all the time with shallow stacks.
const WORKLOADS = {
  // At least 6 rounds: fewer give no 95 % interval of a median (support/stats.mjs).
  'TypeScript compiler': { script: fileURLToPath(new URL('./workload.mjs', import.meta.url)), rounds: 6 },
  'fastify server': { script: fileURLToPath(new URL('./server-workload.mjs', import.meta.url)), rounds: 7 },
};

export const description = 'issue 22: what Runtime.CpuSampler costs real programs (the TypeScript compiler checking this project; a fastify server answering 20,000 requests), at 1 ms and 100 µs, against node --cpu-prof at the same intervals';

const ratioText = (x) => `${x.toFixed(3)}×`;

/**
 * How many samples V8 took in a run: each costs CPU (a signal, a stack walk, the processor thread's
 * work), and how many V8 manages at 100 µs depends on when the scheduler runs its processor thread,
 * so two runs at the same interval can differ by a third. The sampler's trace counts from its
 * session's start, --cpu-prof's profile (read, then removed) from the process's.
 */
async function samplesTaken({ trace, profileDir }) {
  if (trace) {
    let n = 0;
    for await (const e of readTrace(trace)) if (e.name === 'Sample') n++;
    return n;
  }
  if (!profileDir) return undefined;
  const files = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length !== 1) throw new Error(`${profileDir}: ${files.length} profiles after one run of node --cpu-prof`);
  const n = JSON.parse(readFileSync(join(profileDir, files[0]), 'utf8')).samples.length;
  rmSync(join(profileDir, files[0]));
  return n;
}

/** One variant's run, with the child's whole CPU from spawn to exit (its exit-time work included) and the samples taken. */
async function runWhole(script, variant) {
  const before = reapedChildrenCpuMs();
  const result = await runVariant(script, [], { nodeArgs: variant.nodeArgs ?? [], env: variant.env ?? process.env });
  const after = reapedChildrenCpuMs();
  return { ...result, wholeCpuMs: before === undefined || after === undefined ? undefined : after - before, samples: await samplesTaken(variant) };
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-cpu-bench-'));
  const sampler = (us) => ({ trace: join(dir, `s${us}.tptrace`), nodeArgs: [`--import=${REGISTER}`], env: { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: join(dir, `s${us}.tptrace`), TRACEPIPE_PROVIDERS: `Runtime.CpuSampler:*:4:IntervalUs=${us}` } });
  const cpuProf = (us) => {
    const profileDir = join(dir, `cpu-prof-${us}`);
    mkdirSync(profileDir);
    return { profileDir, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-interval=${us}`] };
  };
  const variants = {
    untraced: {},
    'Runtime.CpuSampler, 1 ms': sampler(1000),
    'node --cpu-prof, 1 ms': cpuProf(1000),
    'Runtime.CpuSampler, 100 µs': sampler(100),
    'node --cpu-prof, 100 µs': cpuProf(100),
  };
  const checks = [];
  try {
    for (const [workload, { script, rounds }] of Object.entries(WORKLOADS)) {
      console.log(`${workload}: ${rounds} rounds, a fresh process per variant, order rotating; medians of per-round ratios against untraced in the same round (wall and process CPU of the measured part)`);
      const results = await interleavedRounds(rounds, Object.keys(variants), (name) => runWhole(script, variants[name]));
      const base = results.untraced;
      row(`${workload}: untraced`, `wall ${formatSummary(summarize(base.map((r) => r.wallMs)), 0)} ms, CPU ${formatSummary(summarize(base.map((r) => r.cpuMs)), 0)} ms`);
      const ratios = {};
      for (const name of Object.keys(variants).slice(1)) {
        const wall = summarize(results[name].map((r, i) => r.wallMs / base[i].wallMs));
        const cpu = summarize(results[name].map((r, i) => r.cpuMs / base[i].cpuMs));
        const start = summarize(results[name].map((r, i) => r.startedMs - base[i].startedMs));
        ratios[name] = { wall: wall.median, cpu: cpu.median };
        row(`${workload}: ${name}`, `wall ${formatSummary(wall, 3)}×, CPU ${formatSummary(cpu, 3)}×; start-up +${start.median.toFixed(0)} ms`);
      }
      for (const us of ['1 ms', '100 µs']) {
        const ours = results[`Runtime.CpuSampler, ${us}`];
        const theirs = results[`node --cpu-prof, ${us}`];
        // Both ran in the same round, next to each other: their ratio cancels most of what the machine's load did to that round.
        const paired = ours.map((r, i) => r.cpuMs / theirs[i].cpuMs);
        const whole = ours.every((r, i) => r.wholeCpuMs !== undefined && theirs[i].wholeCpuMs !== undefined) ? ours.map((r, i) => r.wholeCpuMs / theirs[i].wholeCpuMs) : undefined;
        const samples = ours.map((r, i) => r.samples / theirs[i].samples);
        row(`${workload}: Runtime.CpuSampler / --cpu-prof, ${us}`, `CPU per round ${withInterval(paired, ratioText)}; whole process, spawn to exit, ${whole ? withInterval(whole, ratioText) : 'not measured (no /proc)'}`);
        row(`${workload}: samples V8 took, ${us}`, `Runtime.CpuSampler ${median(ours.map((r) => r.samples)).toFixed(0)}, --cpu-prof ${median(theirs.map((r) => r.samples)).toFixed(0)} (medians); per round ${withInterval(samples, ratioText)}`);
        const vsUntraced = ratios[`Runtime.CpuSampler, ${us}`];
        if (us === '1 ms') checks.push({ check: `${workload}, Runtime.CpuSampler at 1 ms: CPU vs untraced (wall ${vsUntraced.wall.toFixed(3)}×)`, value: `${vsUntraced.cpu.toFixed(3)}×`, target: '≤ 1.02×', met: vsUntraced.cpu <= 1.02 });
        checks.push({ check: `${workload}, Runtime.CpuSampler at ${us}: CPU / node --cpu-prof's in the same round (median, 95 % interval)`, value: withInterval(paired, ratioText), target: '≤ 1×', met: median(paired) <= 1 });
        if (whole) checks.push({ check: `${workload}, Runtime.CpuSampler at ${us}: whole-process CPU, spawn to exit, / node --cpu-prof's (its profile written at exit included)`, value: withInterval(whole, ratioText), met: null });
      }
    }
    return checks;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
