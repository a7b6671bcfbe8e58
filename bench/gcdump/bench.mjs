// Issue 11: a heap snapshot of a target holding 2,000,000 instances of a class (test/fixtures/heap-target.mjs),
// taken by `tracepipe gcdump collect` through its default (16 MiB) Block session vs V8's own `v8.writeHeapSnapshot()`
// in the same run. The target takes the snapshot through tracepipe's native addon; a third variant
// takes it through the inspector (the fallback without the addon: TRACEPIPE_GC_HOOK=0 in the target),
// a fourth through the addon with its chunks dropped (no transcoder, no session): V8's own cost on
// that route, the floor of any transcoder fed by it; and a fifth through the addon's C++ transcoder
// with its payloads dropped (no events, no session): V8's cost plus the transcoder's.
// Each variant gets a fresh target process (the first snapshot in a process also builds V8's object-id
// map, so a second one would be cheaper), and they rotate order by round.
//   the target: its pause (the longest gap of a 10 ms timer, measured in the target) and its peak RSS
//               above what it used before (VmHWM, reset through /proc/PID/clear_refs, minus VmRSS)
//   the tool:   gcdump collect's own CPU time and peak RSS, then gcdump report's time and peak RSS, vs
//               memlab (and @vscode/v8-heap-parser) parsing V8's own file of the same heap
// memlab is installed on first use into bench/.cache/ (PUPPETEER_SKIP_DOWNLOAD=1, so its browser is
// not downloaded); without it the run compares with the vscode parser alone. BENCH_GCDUMP_OBJECTS and
// BENCH_GCDUMP_ROUNDS change the size (default 2,000,000) and the rounds (default 1).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { median } from '../support/stats.mjs';
import { row } from '../support/report.mjs';
import { measured, MEASURED_CLI, MEMLAB_DIR, memlabAvailable, OBJECTS, PEER, ROOT, ROUNDS, runProcess, TARGET } from './gcdump-bench-support.mjs';

const ADDON = join(ROOT, 'native/gc-hook/build/Release/heap_snapshot.node');

export const description = `issue 11: gcdump collect + report of a ${OBJECTS.toLocaleString('en-US')}-object heap vs v8.writeHeapSnapshot() and memlab parsing V8's file`;

const mib = (kb) => kb / 1024;
const fmt = (v, unit, d = 0) => `${v.toFixed(d)} ${unit}`;

function procStatusKB(pid, key) {
  const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m[1]);
}

async function startTarget(dir, env = {}) {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tracepipe/register', TARGET, 'serve', String(OBJECTS)], {
    cwd: ROOT,
    env: { ...process.env, TMPDIR: dir, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done || !first.value.startsWith('ready')) throw new Error(`target did not start: ${first.value}`);
  const ask = async (line) => {
    child.stdin.write(`${line}\n`);
    return (await lines.next()).value;
  };
  // Settle: the heap built, its garbage collected, the timer's first gaps forgotten.
  await new Promise((r) => setTimeout(r, 1000));
  await ask('gap');
  return { child, pid: child.pid, ask, stop: () => child.kill('SIGKILL') };
}

/** The target's RSS before, and a fresh high-water mark to measure the peak above it. */
function resetPeak(pid) {
  const before = procStatusKB(pid, 'VmRSS');
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
  return () => procStatusKB(pid, 'VmHWM') - before;
}

/** Runs a measured step; it must succeed. */
async function runStep(cmd, args, env) {
  const r = await runProcess(cmd, args, env);
  if (r.code !== 0) throw new Error(`${args.join(' ')} exited ${r.code}: ${r.err.trim().split('\n').slice(-3).join(' | ')}`);
  return r;
}

/** `route`: 'addon' (the default), or 'inspector' (the addon turned off in the target: the fallback). */
async function gcdumpVariant(dir, route) {
  const target = await startTarget(dir, route === 'inspector' ? { TRACEPIPE_GC_HOOK: '0' } : {});
  try {
    const peak = resetPeak(target.pid);
    const file = join(dir, 'bench.gcdump');
    const collect = await runStep(process.execPath, [MEASURED_CLI, 'gcdump', 'collect', '--pid', String(target.pid), '-o', file], { TMPDIR: dir });
    const targetPeakKB = peak();
    const pauseMs = Number((await target.ask('gap')).split(' ')[1]);
    const report = await runStep(process.execPath, [MEASURED_CLI, 'gcdump', 'report', file]);
    const count = new RegExp(`\\n\\s+([\\d,]+)\\s+[\\d,]+\\s+[\\d,]+\\s+Retained\\n`).exec(report.out)?.[1];
    const nodes = /wrote .*: ([\d,]+) nodes and ([\d,]+) edges/.exec(collect.out);
    return {
      pauseMs,
      targetPeakKB,
      collect: measured(collect.err),
      report: measured(report.err),
      retained: count,
      nodes: nodes?.[1],
      edges: nodes?.[2],
      dumpBytes: statSync(file).size,
    };
  } finally {
    target.stop();
  }
}

/** The addon's snapshot with nothing done with the chunks: the pause V8 alone causes on that route. */
async function floorVariant(dir) {
  const target = await startTarget(dir);
  try {
    const reply = await target.ask('stream');
    return { pauseMs: Number((await target.ask('gap')).split(' ')[1]), streamMs: Number(reply.split(' ')[1]) };
  } finally {
    target.stop();
  }
}

/** The addon's C++ transcoder with its payloads dropped: V8 and the transcoder, no events. */
async function transcodeVariant(dir) {
  const target = await startTarget(dir);
  try {
    const reply = await target.ask('transcode');
    if (reply.split(' ')[2] === '-1') throw new Error('the transcoder failed on the target\'s snapshot');
    return { pauseMs: Number((await target.ask('gap')).split(' ')[1]) };
  } finally {
    target.stop();
  }
}

async function v8Variant(dir, peers) {
  const target = await startTarget(dir);
  try {
    const peak = resetPeak(target.pid);
    const file = join(dir, 'bench.heapsnapshot');
    const reply = await target.ask(`snapshot ${file}`);
    const targetPeakKB = peak();
    const pauseMs = Number((await target.ask('gap')).split(' ')[1]);
    const parsed = {};
    for (const p of peers) parsed[p] = JSON.parse((await runStep(process.execPath, [PEER, p, file, MEMLAB_DIR])).out);
    return { pauseMs, writeMs: Number(reply.split(' ')[1]), targetPeakKB, fileBytes: statSync(file).size, parsed };
  } finally {
    target.stop();
    rmSync(join(dir, 'bench.heapsnapshot'), { force: true });
  }
}

export async function run() {
  if (process.platform !== 'linux') {
    console.log('  skipped: the target peak RSS comes from /proc (Linux only)');
    return [];
  }
  const peers = memlabAvailable() ? ['memlab', 'vscode'] : ['vscode'];
  if (!peers.includes('memlab')) console.log('  memlab could not be installed; comparing with @vscode/v8-heap-parser only');
  if (!existsSync(ADDON)) throw new Error(`the heap snapshot addon is not built (${ADDON}): run npm run install`);
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-gcdump-bench-'));
  const g = [];
  const v = [];
  const insp = [];
  const floor = [];
  const transcoded = [];
  const variants = [
    async () => g.push(await gcdumpVariant(dir, 'addon')),
    async () => v.push(await v8Variant(dir, peers)),
    async () => insp.push(await gcdumpVariant(dir, 'inspector')),
    async () => floor.push(await floorVariant(dir)),
    async () => transcoded.push(await transcodeVariant(dir)),
  ];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < variants.length; k++) await variants[(round + k) % variants.length]();
      const [last, lastI] = [g[g.length - 1], insp[insp.length - 1]];
      console.log(`  round ${round + 1}: pauses: gcdump ${last.pauseMs} ms, through the inspector ${lastI.pauseMs} ms, writeHeapSnapshot ${v[v.length - 1].pauseMs} ms, addon with chunks dropped ${floor[floor.length - 1].pauseMs} ms, transcoded with payloads dropped ${transcoded[transcoded.length - 1].pauseMs} ms`);
      console.log(`  round ${round + 1}: gcdump ${last.nodes} nodes, ${last.edges} edges, ${last.retained} Retained (inspector route: ${lastI.nodes} nodes, ${lastI.retained} Retained); V8's file parsed by ${peers.join(', ')}: ${peers.map((p) => `${v[v.length - 1].parsed[p].nodes} nodes, ${v[v.length - 1].parsed[p].retained} Retained`).join('; ')}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const m = (list, f) => median(list.map(f));
  const pauseG = m(g, (x) => x.pauseMs);
  const pauseV = m(v, (x) => x.pauseMs);
  const pauseI = m(insp, (x) => x.pauseMs);
  const pauseF = m(floor, (x) => x.pauseMs);
  const pauseT = m(transcoded, (x) => x.pauseMs);
  const peakG = mib(m(g, (x) => x.targetPeakKB));
  const peakV = mib(m(v, (x) => x.targetPeakKB));
  console.log('  in the target');
  row('pause, gcdump collect (default 16 MiB Block session)', fmt(pauseG, 'ms'));
  row('pause, the same through the inspector (no addon)', fmt(pauseI, 'ms'));
  row('pause, v8.writeHeapSnapshot()', `${fmt(pauseV, 'ms')} (its own timing: ${fmt(m(v, (x) => x.writeMs), 'ms')})`);
  row('pause, the addon with its chunks dropped', fmt(pauseF, 'ms'));
  row('pause, the addon transcoding, payloads dropped', fmt(pauseT, 'ms'));
  row('peak RSS increase, gcdump collect', fmt(peakG, 'MiB'));
  row('peak RSS increase, the same through the inspector', fmt(mib(m(insp, (x) => x.targetPeakKB)), 'MiB'));
  row('peak RSS increase, v8.writeHeapSnapshot()', fmt(peakV, 'MiB'));
  console.log('  in the tool');
  const collectCpu = m(g, (x) => x.collect.cpuMs);
  const reportWall = m(g, (x) => x.report.wallMs);
  const toolMs = collectCpu + reportWall;
  const toolPeak = mib(Math.max(m(g, (x) => x.collect.maxRssKB), m(g, (x) => x.report.maxRssKB)));
  row('gcdump collect: wall (waits for the target), CPU', `${fmt(m(g, (x) => x.collect.wallMs), 'ms')}, ${fmt(collectCpu, 'ms')}`);
  row('gcdump collect: peak RSS', fmt(mib(m(g, (x) => x.collect.maxRssKB)), 'MiB'));
  row('gcdump report: wall, peak RSS', `${fmt(reportWall, 'ms')}, ${fmt(mib(m(g, (x) => x.report.maxRssKB)), 'MiB')}`);
  row('.gcdump size vs V8 .heapsnapshot', `${fmt(m(g, (x) => x.dumpBytes) / 2 ** 20, 'MiB', 1)} vs ${fmt(m(v, (x) => x.fileBytes) / 2 ** 20, 'MiB', 1)}`);
  for (const p of peers) row(`${p} parsing V8's file: wall, peak RSS`, `${fmt(m(v, (x) => x.parsed[p].wallMs), 'ms')}, ${fmt(mib(m(v, (x) => x.parsed[p].maxRssKB)), 'MiB')}`);
  const ref = peers[0];
  const refMs = m(v, (x) => x.parsed[ref].wallMs);
  const refPeak = mib(m(v, (x) => x.parsed[ref].maxRssKB));
  const exact = [...g, ...insp].every((x) => x.retained === OBJECTS.toLocaleString('en-US'));
  return [
    { check: `gcdump report shows exactly ${OBJECTS.toLocaleString('en-US')} Retained`, value: exact ? 'exact (both routes)' : [...g, ...insp].map((x) => x.retained).join(', '), target: 'exact', met: exact },
    { check: 'target pause: gcdump / writeHeapSnapshot', value: `${(pauseG / pauseV).toFixed(2)}×`, target: '≤ 1×', met: pauseG <= pauseV },
    { check: 'target pause: gcdump through the inspector (no addon) / writeHeapSnapshot', value: `${(pauseI / pauseV).toFixed(2)}×`, met: null },
    { check: 'target pause: the addon with its chunks dropped (V8 alone) / writeHeapSnapshot', value: `${(pauseF / pauseV).toFixed(2)}×`, met: null },
    { check: 'target pause: the addon transcoding, payloads dropped (V8 + C++ transcoder) / writeHeapSnapshot', value: `${(pauseT / pauseV).toFixed(2)}×`, met: null },
    { check: 'target peak RSS increase: gcdump / writeHeapSnapshot', value: `${(peakG / peakV).toFixed(2)}×`, target: '≤ 1×', met: peakG <= peakV },
    { check: `tool time (collect CPU + report) / ${ref}`, value: `${(toolMs / refMs).toFixed(2)}×`, target: '≤ 0.5×', met: toolMs <= 0.5 * refMs },
    { check: `tool peak RSS / ${ref}`, value: `${(toolPeak / refPeak).toFixed(2)}×`, target: '≤ 0.5×', met: toolPeak <= 0.5 * refPeak },
  ];
}
