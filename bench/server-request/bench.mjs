import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { row } from '../support/report.mjs';
import { formatSummary, median, signedMicros, summarize, withInterval } from '../support/stats.mjs';
import { interleavedRounds, runVariant } from '../support/variant-process.mjs';
import { nodesToMeasure } from '../support/pinned-http.mjs';
import { TARGET_EVENT_US } from '../support/http-variants.mjs';

const VARIANT = fileURLToPath(new URL('./variant.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist', import.meta.url));
// 6 is the fewest rounds that give a 95 % interval of the median.
const ROUNDS = 7;
const BATCHES = 7;
const ITERS = 200_000;
/**
 * Node's hooks with an empty handler on each message and no session (the floor under any tracer of
 * them), then Node.Channels as a user enables it (span context across await), in the cheap mode, and
 * its request event alone.
 */
const HOOKS = "Node's hooks";
const MODES = { [HOOKS]: '-', 'event alone': 'Node.Channels:0x1', 'context=sync': 'Node.Channels:0x11:5:context=sync', default: 'Node.Channels' };
/** Each part: what one mode adds to another, in the same round. */
const PARTS = [
  { name: "the request event over Node's hooks", of: 'event alone', over: HOOKS },
  { name: "the span's events instead (context=sync) over the event", of: 'context=sync', over: 'event alone' },
  { name: 'the span context across await over context=sync', of: 'default', over: 'context=sync' },
];

export const description =
  "issue 29: Node.Channels' cost per http server request (start + response finish messages) in each mode and over Node's hooks with empty handlers, per Node.js version (BENCH_NODES as in http-overhead); TRACEPIPE_BENCH_BEFORE=<built checkout> measures that build beside this one";

export async function run() {
  const nodes = nodesToMeasure();
  const builds = { current: null };
  if (process.env.TRACEPIPE_BENCH_BEFORE) builds.before = resolve(process.env.TRACEPIPE_BENCH_BEFORE, 'dist');
  // The build before runs on this Node.js only (its addon was built for it).
  const cells = nodes.flatMap((node, n) =>
    Object.keys(builds)
      .filter((b) => b === 'current' || n === 0)
      .flatMap((build) => Object.keys(MODES).map((mode) => ({ key: `${node.version}, ${build}, ${mode}`, node, dist: builds[build] ?? resolve(node.tree, 'dist'), mode }))),
  );
  const byKey = new Map(cells.map((c) => [c.key, c]));
  console.log(`${ROUNDS} rounds x ${cells.length} cells (Node.js, build, mode), each in its own process: ${BATCHES} timed batches of ${ITERS} requests after 2 warm-up batches`);
  const res = await interleavedRounds(ROUNDS, [...byKey.keys()], (key) => {
    const c = byKey.get(key);
    return runVariant(VARIANT, [c.dist, MODES[c.mode], String(ITERS), String(BATCHES)], { node: c.node.bin });
  });
  const cpu = (r) => r.cpuNsPerOp ?? r.nsPerOp;
  for (const c of cells) row(`${c.key}: ns per request, wall; on-CPU`, `${formatSummary(summarize(res[c.key].map((r) => r.nsPerOp)))}; ${formatSummary(summarize(res[c.key].map(cpu)))}`);
  const dropped = cells.flatMap((c) => res[c.key]).reduce((k, r) => k + r.eventsDropped, 0);
  const checks = [{ check: 'server request: events dropped', value: String(dropped), target: '0', met: dropped === 0 }];
  for (const node of nodes) {
    const cell = (mode, build = 'current') => res[`${node.version}, ${build}, ${mode}`];
    // Per round, on-CPU µs of one mode over another, measured side by side.
    const part = (p) => cell(p.of).map((r, k) => (cpu(r) - cpu(cell(p.over)[k])) / 1000);
    console.log(`Node ${node.version}: extra on-CPU time per request, median over rounds (95 % interval):`);
    for (const p of PARTS) row(`  ${p.name}`, withInterval(part(p), signedMicros));
    const event = part(PARTS[0]);
    checks.push({ check: `Node ${node.version}: the request event over Node's hooks (server-request, in process)`, value: withInterval(event, signedMicros), target: `<= ${TARGET_EVENT_US} µs`, met: median(event) <= TARGET_EVENT_US });
  }
  if (builds.before) {
    for (const mode of Object.keys(MODES).filter((m) => m !== HOOKS)) {
      const now = res[`${nodes[0].version}, current, ${mode}`];
      const before = res[`${nodes[0].version}, before, ${mode}`];
      const ratio = summarize(now.map((r, k) => cpu(r) / cpu(before[k])));
      row(`${mode}: current / before, per round (on-CPU)`, formatSummary(ratio, 3));
      checks.push({ check: `server request, ${mode}: current / before (on-CPU)`, value: ratio.median.toFixed(3), target: '', met: null });
    }
  }
  return checks;
}
