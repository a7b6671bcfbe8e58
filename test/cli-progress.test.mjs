// Progress of long jobs: one line on stderr, rewritten in place, only when stderr is a terminal
// (checked under a pseudo-terminal made by util-linux's `script`) and never with --quiet or in a pipe.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProgressLine } from '../dist/cli/progress-line.js';
import { readTrace } from '../dist/format/trace-reader.js';
import { writeGcdump } from '../dist/heap/gcdump-file.js';
import { graphOf } from './helpers/heap-graph-of.mjs';
import { syntheticTrace } from './helpers/synthetic-trace.mjs';

const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const CLEAR = '\r\x1b[K';

/** A stand-in for a terminal's stderr that keeps what is written. */
function fakeTerminal(isTTY = true) {
  const writes = [];
  return { writes, out: { isTTY, columns: 100, write: (s) => writes.push(s) } };
}

test('the line: what is going on, events and bytes against the size, the rate and an estimate of the rest; cleared at the end', () => {
  const { writes, out } = fakeTerminal();
  const p = new ProgressLine('converting', { out });
  assert.equal(writes[0], `${CLEAR}converting: 0.0 s`, 'drawn at once, before the job reports');
  p.update({ doing: 'converting', events: 1_234_567, bytes: 45 << 20, totalBytes: 90 << 20 });
  p.update({ doing: 'writing', events: 10, bytes: 50, totalBytes: 100 });
  p.stop();
  assert.match(writes.at(-2), /^\r\x1b\[Kwriting: 10 events, 50 B of 100 B \(50%\), [\d.]+ (k |M )?events\/s, ~\d+ s left$/, 'a new stage is drawn at once (its rate scaled to its size)');
  assert.equal(writes.at(-1), CLEAR);
  p.stop();
  assert.equal(writes.at(-1), CLEAR, 'stopping twice clears once');
  assert.equal(writes.filter((w) => w === CLEAR).length, 1);
});

test('names on the line reach the terminal escaped, as everywhere in the CLI', () => {
  const { writes, out } = fakeTerminal();
  new ProgressLine('reading evil\x1b]0;owned\x07.gcdump', { out }).stop();
  assert.equal(writes[0], `${CLEAR}reading evil\\u001b]0;owned\\u0007.gcdump: 0.0 s`);
});

test('nothing at all when stderr is not a terminal, or with quiet', () => {
  for (const [isTTY, quiet] of [[false, false], [true, true]]) {
    const { writes, out } = fakeTerminal(isTTY);
    const p = new ProgressLine('converting', { out, quiet }).followTraceReads();
    p.update({ doing: 'writing', events: 1, bytes: 1 });
    p.stop();
    assert.deepEqual(writes, []);
  }
});

let dir;
let trace;
let dump;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tracepipe-progress-'));
  trace = join(dir, 'app.tptrace');
  await writeFile(trace, syntheticTrace({ batches: 20 }).bytes);
  dump = join(dir, 'app.gcdump');
  writeGcdump(dump, graphOf([{ type: 'synthetic', name: '', self: 0, edges: [['element', 1, 1]] }, { type: 'object', name: 'Foo', self: 10, edges: [] }], ['', 'Foo']));
});

test('passes over a trace file reach the line through the reader, with the file size; each new pass is drawn at once', async () => {
  const { writes, out } = fakeTerminal();
  const p = new ProgressLine('reading', { out }).followTraceReads();
  await readTrace(trace).summary();
  await readTrace(trace).summary();
  p.stop();
  const size = (await import('node:fs')).statSync(trace).size;
  assert.ok(writes.some((w) => w.startsWith(`${CLEAR}reading: 0.0 s, 0 B of ${(size / 1024).toFixed(1)} KiB (0%)`)), writes.join('|'));
  assert.ok(writes.some((w) => w.startsWith(`${CLEAR}reading (pass 2): `)), writes.join('|'));
  // Unsubscribed: later reads draw nothing.
  const before = writes.length;
  await readTrace(trace).summary();
  assert.equal(writes.length, before);
});

/** Runs the CLI under a pseudo-terminal (stdout and stderr both the terminal); resolves to all it printed. */
function underTerminal(args) {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
  return new Promise((resolve) => {
    // -e: script exits with the command's status; stdin is not a terminal, so script only relays output.
    execFile('script', ['-q', '-e', '-c', command, '/dev/null'], { timeout: 60_000, env: { ...process.env, COLUMNS: '120' } }, (err, stdout) => {
      resolve({ code: err ? (err.killed ? `killed (${err.signal})` : err.code) : 0, output: stdout });
    });
  });
}

function piped(args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.killed ? `killed (${err.signal})` : err.code) : 0, stdout, stderr });
    });
  });
}

const hasScript = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const JOBS = () => [
  { args: ['stats', trace], line: /\r\x1b\[Kcounting: / },
  { args: ['report', trace], line: /\r\x1b\[Kreading \(pass 2\): / },
  { args: ['explain', trace], line: /\r\x1b\[Kexplaining: / },
  { args: ['convert', trace, '--to', 'chrome', '-o', join(dir, 'app.json')], line: /\r\x1b\[Kconverting: / },
  { args: ['gcdump', 'report', dump], line: /\r\x1b\[Kcomputing retained sizes \(dominators of 2 nodes\)/ },
  { args: ['demo', '--duration', '200', '-o', join(dir, 'demo.tptrace')], line: /\r\x1b\[Krunning the sample app for 200 ms: / },
];

test('on a terminal, each long job shows its progress line and clears it; --quiet shows none', { skip: !hasScript && 'util-linux script is not installed' }, async () => {
  for (const { args, line } of JOBS()) {
    const shown = await underTerminal(args);
    assert.equal(shown.code, 0, `${args.join(' ')}: ${shown.output}`);
    assert.match(shown.output, line, args.join(' '));
    // Cleared before the result: the result's first line starts after a clearing.
    const result = shown.output.slice(shown.output.lastIndexOf(CLEAR) + CLEAR.length);
    assert.doesNotMatch(result, /\x1b/, `${args.join(' ')}: nothing of the line is left after it is cleared`);
    const quiet = await underTerminal([...args, '--quiet']);
    assert.equal(quiet.code, 0, quiet.output);
    assert.ok(!quiet.output.includes('\x1b[K'), `${args.join(' ')} --quiet: no progress`);
  }
});

test('dump shows no line when its own output goes to the same terminal', { skip: !hasScript && 'util-linux script is not installed' }, async () => {
  const r = await underTerminal(['dump', trace]);
  assert.equal(r.code, 0);
  assert.ok(!r.output.includes('\x1b[K'));
});

test('in a pipe, no job writes anything on stderr', async () => {
  for (const { args } of JOBS()) {
    const r = await piped(args);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '', args.join(' '));
  }
});

test('collect and gcdump collect draw their live counts on the same line; --quiet silences them, terminal or not', async () => {
  const { CollectProgress } = await import('../dist/cli/collect-progress.js');
  const { GcdumpProgress } = await import('../dist/cli/gcdump/gcdump-progress.js');
  const bytes = syntheticTrace({ batches: 4 }).bytes;
  const { writes, out } = fakeTerminal();
  const c = new CollectProgress(out);
  c.start();
  c.push(bytes);
  c.stop();
  assert.match(writes[0], /^\r\x1b\[Kcollecting: /);
  assert.equal(writes.at(-1), CLEAR);
  const builder = { phase: 'waiting', nodeCount: 0, declaredNodes: 0, edgeCount: 0, declaredEdges: 0 };
  const g = fakeTerminal();
  const gp = new GcdumpProgress(g.out, builder);
  gp.start();
  assert.equal(g.writes[0], `${CLEAR}V8 is taking the snapshot (the target is paused): 0.0 s`);
  Object.assign(builder, { phase: 'nodes', nodeCount: 5, declaredNodes: 10, declaredEdges: 20 });
  gp.received(1000);
  gp.update();
  gp.stop();
  assert.match(g.writes.at(-2), /^\r\x1b\[Kreceiving nodes: [\d.]+ s, 0 B read, nodes 5\/10, edges 0\/20$/, 'a new phase is drawn at once, its bytes counted from its start');
  assert.equal(g.writes.at(-1), CLEAR);
  for (const isTTY of [true, false]) {
    const q = fakeTerminal(isTTY);
    const quiet = new CollectProgress(q.out, true);
    quiet.start();
    quiet.push(bytes);
    quiet.stop();
    const gq = new GcdumpProgress(q.out, { ...builder }, true);
    gq.start();
    gq.update();
    gq.stop();
    assert.deepEqual(q.writes, [], `isTTY ${isTTY}`);
  }
});
