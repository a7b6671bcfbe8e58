// `node parse-peer.mjs memlab|vscode FILE [MODULE_DIR]`: a peer parses V8's .heapsnapshot (memlab builds
// its whole graph, dominators and retained sizes included); prints one JSON line: time, peak RSS and the
// counts it read, so the run can check it read the same heap.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [peer, file, moduleDir] = process.argv.slice(2);
const started = performance.now();
let result;
if (peer === 'memlab') {
  const require = createRequire(join(moduleDir, 'package.json'));
  const { utils } = require('@memlab/core');
  const heap = await utils.getSnapshotFromFile(file, { buildNodeIdIndex: true });
  let retained = 0;
  heap.nodes.forEach((n) => {
    if (n.name === 'Retained' && n.type === 'object') retained++;
  });
  result = { nodes: heap.nodes.length, edges: heap.edges.length, retained };
} else {
  const parser = createRequire(import.meta.url)('@vscode/v8-heap-parser');
  const g = parser.decode_bytes(readFileSync(file));
  const groups = g.get_class_groups(0, 1e9, false);
  result = { nodes: groups.reduce((n, c) => n + c.children_len, 0), retained: g.get_class_counts(['Retained'])[0] };
}
const r = process.resourceUsage();
process.stdout.write(`${JSON.stringify({ ...result, wallMs: performance.now() - started, cpuMs: (r.userCPUTime + r.systemCPUTime) / 1000, maxRssKB: r.maxRSS })}\n`);
