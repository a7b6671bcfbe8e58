// Where the target's pause goes during `gcdump collect`: the heap target (test/fixtures/heap-target.mjs)
// runs under V8's CPU profiler (--cpu-prof, 1 ms samples) while the CLI collects one snapshot; the
// samples inside the snapshot are then split by what ran on the main thread. Not part of `npm run
// bench`: the profiler slows the target (more so `v8.writeHeapSnapshot()`), so its absolute times are
// not comparable with the bench's; the shares are what it is for. The addon's C++ transcoder runs
// inside V8's serialization, so its time is in that line (bench.mjs measures it apart: the addon
// transcoding with its payloads dropped, beside V8 alone).
//   node bench/gcdump/pause-profile.mjs [objects, default 2,000,000]
// TRACEPIPE_GC_HOOK=0 in the environment profiles the inspector route instead of the addon's.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const OBJECTS = Number(process.argv[2] ?? 2_000_000);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tracepipe-pause-profile-'));

try {
  const target = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '1000', '--import', 'tracepipe/register', join(ROOT, 'test/fixtures/heap-target.mjs'), 'serve', String(OBJECTS)], {
    cwd: ROOT,
    env: { ...process.env, TMPDIR: dir },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: target.stdout })[Symbol.asyncIterator]();
  const ask = async (line) => {
    target.stdin.write(`${line}\n`);
    return (await lines.next()).value;
  };
  await lines.next();
  await new Promise((r) => setTimeout(r, 1000));
  await ask('gap');
  execFileSync(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'gcdump', 'collect', '--pid', String(target.pid), '-o', join(dir, 'p.gcdump')], { env: { ...process.env, TMPDIR: dir }, stdio: ['ignore', 'ignore', 'inherit'] });
  const pause = Number((await ask('gap')).split(' ')[1]);
  target.stdin.write('exit\n');
  await new Promise((r) => target.on('exit', r));
  const profile = JSON.parse(readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))), 'utf8'));
  console.log(`${OBJECTS.toLocaleString('en-US')} objects, route: ${process.env.TRACEPIPE_GC_HOOK === '0' ? 'inspector' : 'addon'}; the target's pause ${pause} ms (under the profiler)`);
  const rows = split(profile);
  const all = rows.find(([what]) => what.startsWith('all'))[1];
  let rest = 0;
  for (const [what, ms] of rows) {
    if (ms >= all * 0.005 || !what.startsWith('other')) console.log(`  ${what.padEnd(60)} ${ms.toFixed(0).padStart(7)} ms`);
    else rest += ms;
  }
  console.log(`  ${'other, each under 0.5%'.padEnd(60)} ${rest.toFixed(0).padStart(7)} ms`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** The samples from the snapshot's start to its end, by what ran. */
function split(p) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const file = (n) => n.callFrame.url.split('/').pop();
  const inStream = (id) => {
    for (let n = id; n !== undefined; n = parent.get(n)) if (byId.get(n).callFrame.functionName === 'streamHeapSnapshot' || byId.get(n).callFrame.functionName === 'takeSnapshot') return true;
    return false;
  };
  const inCallback = (id) => {
    for (let n = id; n !== undefined; n = parent.get(n)) if (file(byId.get(n)) === 'snapshot-stream.js' && byId.get(n).callFrame.functionName !== 'streamHeapSnapshot') return true;
    return false;
  };
  let t = p.startTime;
  const times = p.samples.map((id, i) => (t += p.timeDeltas[i] ?? 0));
  const inside = p.samples.map((id) => inStream(id));
  const first = inside.indexOf(true);
  const last = inside.lastIndexOf(true);
  const firstChunk = p.samples.findIndex((id, i) => i >= first && inCallback(id));
  const out = new Map();
  const add = (k, us) => out.set(k, (out.get(k) ?? 0) + us / 1000);
  for (let i = first; i <= last; i++) {
    const n = byId.get(p.samples[i]);
    const us = (times[i + 1] ?? times[i]) - times[i];
    const f = file(n);
    const fn = n.callFrame.functionName;
    if (fn === 'streamHeapSnapshot' || fn === 'takeSnapshot') add(i < firstChunk ? 'V8: taking the snapshot (until the first chunk)' : 'V8 serializing (and on the addon route our C++ transcoder)', us);
    else if (['snapshot-json-parser.js', 'snapshot-sections.js', 'bulk-codec.js'].includes(f)) add('JavaScript parser (the inspector route: bytes to bulk events)', us);
    else if (f === 'fair-queue.js') add('parked: the Block session full', us);
    else if (fn === '(garbage collector)') add('garbage collector', us);
    else if (n.callFrame.url.includes('/dist/')) add('event writes (tracepipe)', us);
    else add(`other (${fn || '(anonymous)'} ...)`, us);
  }
  out.set('all, first to last sample', (times[last] - times[first]) / 1000);
  return [...out].sort((a, b) => b[1] - a[1]);
}
