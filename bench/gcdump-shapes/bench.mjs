// Issue 25: `gcdump report` on five heap shapes of 2,000,000 objects each, held by a real target
// (test/fixtures/heap-target.mjs shape S N): a linked list, a complete binary tree, 2,000,000 holders of
// one object, 1,000,000 two-object cycles, a flat array. Per shape: report's wall time and peak RSS on
// the dump gcdump collect took, vs memlab (which builds its dominator tree and retained sizes) parsing
// V8's own .heapsnapshot of the same heap, taken in the same target right after. The shapes rotate
// order by round. memlab is installed on first use as in the gcdump benchmark; BENCH_GCDUMP_OBJECTS and
// BENCH_GCDUMP_ROUNDS change the size (default 2,000,000) and the rounds (default 1).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { median } from '../support/stats.mjs';
import { row } from '../support/report.mjs';
import { measured, MEASURED_CLI, MEMLAB_DIR, memlabAvailable, OBJECTS, PEER, ROOT, ROUNDS, runProcess, TARGET } from '../gcdump/gcdump-bench-support.mjs';

const SHAPES = ['chain', 'tree', 'fanIn', 'cycles', 'flat'];

export const description = `issue 25: gcdump report on five heap shapes of ${OBJECTS.toLocaleString('en-US')} objects vs memlab on V8's own snapshot`;

async function shapeRound(dir, shape, memlab) {
  const child = spawn(process.execPath, ['--import', 'tracepipe/register', TARGET, 'shape', shape, String(OBJECTS)], { cwd: ROOT, env: { ...process.env, TMPDIR: dir }, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  try {
    const first = await lines.next();
    if (first.done || !first.value.startsWith('ready')) throw new Error(`target did not start: ${first.value}`);
    const dump = join(dir, `${shape}.gcdump`);
    const collect = await runProcess(process.execPath, [MEASURED_CLI, 'gcdump', 'collect', '--pid', String(child.pid), '-o', dump], { TMPDIR: dir });
    if (collect.code !== 0) throw new Error(`collect failed: ${collect.err.trim().split('\n').pop()}`);
    const report = await runProcess(process.execPath, [MEASURED_CLI, 'gcdump', 'report', dump]);
    if (report.code !== 0) throw new Error(`report failed: ${report.err.trim().split('\n').pop()}`);
    const nodes = /([\d,]+) nodes, ([\d,]+) edges/.exec(report.out);
    const result = { report: measured(report.err), nodes: nodes[1], edges: nodes[2] };
    if (memlab) {
      const own = join(dir, `${shape}.heapsnapshot`);
      child.stdin.write(`snapshot ${own}\n`);
      await lines.next();
      const peer = await runProcess(process.execPath, [PEER, 'memlab', own, MEMLAB_DIR]);
      result.memlab = peer.code === 0 ? JSON.parse(peer.out) : { failed: peer.err.trim().split('\n').slice(-2).join(' | ') };
      rmSync(own, { force: true });
    }
    rmSync(dump, { force: true });
    return result;
  } finally {
    child.kill('SIGKILL');
  }
}

export async function run() {
  const memlab = memlabAvailable();
  if (!memlab) console.log('  memlab could not be installed; gcdump report alone');
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-gcdump-shapes-'));
  const results = Object.fromEntries(SHAPES.map((s) => [s, []]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < SHAPES.length; k++) {
        const shape = SHAPES[(round + k) % SHAPES.length];
        const r = await shapeRound(dir, shape, memlab);
        results[shape].push(r);
        const theirs = r.memlab ? (r.memlab.failed ? `memlab failed: ${r.memlab.failed}` : `memlab ${r.memlab.wallMs.toFixed(0)} ms, ${(r.memlab.maxRssKB / 1024).toFixed(0)} MiB (${r.memlab.nodes} nodes)`) : '';
        console.log(`  round ${round + 1}, ${shape}: ${r.nodes} nodes, ${r.edges} edges; report ${r.report.wallMs.toFixed(0)} ms, ${(r.report.maxRssKB / 1024).toFixed(0)} MiB; ${theirs}`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const m = (list, f) => median(list.map(f));
  const flatMs = m(results.flat, (x) => x.report.wallMs);
  const checks = [];
  for (const shape of SHAPES) {
    const list = results[shape];
    const ms = m(list, (x) => x.report.wallMs);
    const rss = m(list, (x) => x.report.maxRssKB) / 1024;
    const ok = list.filter((x) => x.memlab && !x.memlab.failed);
    const theirMs = ok.length ? m(ok, (x) => x.memlab.wallMs) : NaN;
    const theirRss = ok.length ? m(ok, (x) => x.memlab.maxRssKB) / 1024 : NaN;
    row(`${shape}: report wall, peak RSS`, `${ms.toFixed(0)} ms, ${rss.toFixed(0)} MiB${ok.length ? `; memlab ${theirMs.toFixed(0)} ms, ${theirRss.toFixed(0)} MiB` : ''}`);
    if (ok.length) checks.push({ check: `${shape}: report time / memlab`, value: `${(ms / theirMs).toFixed(2)}×`, target: '≤ 0.5×', met: ms <= 0.5 * theirMs });
    if (ok.length) checks.push({ check: `${shape}: report peak RSS / memlab`, value: `${(rss / theirRss).toFixed(2)}×`, met: null });
    checks.push({ check: `${shape}: report time / flat's`, value: `${(ms / flatMs).toFixed(2)}×`, target: '≤ 3×', met: ms <= 3 * flatMs });
  }
  return checks;
}
