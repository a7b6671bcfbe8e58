// Issue 11 end to end: `tracepipe gcdump collect` against a real target holding N instances of a class
// (test/fixtures/heap-target.mjs), through a 2 MB Block buffer; the counts are checked against V8's
// declaration, and the .heapsnapshot export and V8's own snapshot of the same heap against an
// independent parser (@vscode/v8-heap-parser). Then the failure cases: the tool killed, the target
// gone, a consumer that stalls past the block timeout. N is 200,000 here (GCDUMP_TEST_OBJECTS to
// change it); `npm run bench` runs 2,000,000.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processInfo } from '../dist/index.js';
import { startCli, startTarget, useTmpdir, waitFor } from './helpers/ipc-processes.mjs';

const N = Number(process.env.GCDUMP_TEST_OBJECTS ?? 200_000);
const HEAP_TARGET = fileURLToPath(new URL('./fixtures/heap-target.mjs', import.meta.url));
const heapParser = createRequire(import.meta.url)('@vscode/v8-heap-parser');
const dir = await useTmpdir(after);
const digits = (n) => n.toLocaleString('en-US');
const noTemporaries = () => assert.deepEqual(readdirSync(dir).filter((f) => f.includes('.tmp')), [], 'no temporary file left');

const heapTarget = (t, n) => startTarget(t, dir, { script: HEAP_TARGET, args: ['serve', String(n)] });
const gcdump = (t, args) => startCli(t, dir, ['gcdump', ...args]);

/** Resolves once the CLI's stderr (not a terminal: phase lines) says the nodes are streaming. */
const streaming = (cli) => waitFor('the snapshot to stream', () => /receiving [\d,]+ nodes/.test(cli.output()), 120_000, 20);

/**
 * A .heapsnapshot read by parsers nobody here wrote: per-class counts and the node total from
 * @vscode/v8-heap-parser, the node and edge arrays' lengths from V8's own JSON.parse.
 */
function independent(file) {
  const text = readFileSync(file);
  const g = heapParser.decode_bytes(text);
  const classes = new Map(g.get_class_groups(0, 1e9, true).map((c) => [c.name(), c.children_len]));
  const doc = JSON.parse(text.toString('utf8'));
  const m = doc.snapshot.meta;
  return {
    nodes: [...classes.values()].reduce((a, b) => a + b, 0),
    nodeArray: doc.nodes.length / m.node_fields.length,
    edges: doc.edges.length / m.edge_fields.length,
    declared: { nodes: doc.snapshot.node_count, edges: doc.snapshot.edge_count },
    classes,
  };
}

test(`collect through a 2 MB Block buffer: lossless, V8's counts, ${digits(N)} instances in the report; the export and V8's own file agree with an independent parser`, { timeout: 600_000 }, async (t) => {
  const target = await heapTarget(t, N);
  const dump = join(dir, 'first.gcdump');
  const r = await gcdump(t, ['collect', '--pid', String(target.pid), '--buffer-size', '2', '-o', dump]).done;
  assert.equal(r.code, 0, r.stderr);
  const declared = /receiving ([\d,]+) nodes and ([\d,]+) edges/.exec(r.stderr);
  assert.ok(declared, r.stderr);
  assert.match(r.stdout, new RegExp(`wrote ${dump}: ${declared[1]} nodes and ${declared[2]} edges \\(V8's declared counts\\)`));
  assert.match(r.stdout, /nothing dropped/);
  noTemporaries();

  const report = await gcdump(t, ['report', dump, '--top', '5']).done;
  assert.equal(report.code, 0, report.stderr);
  assert.match(report.stdout, new RegExp(`${declared[1]} nodes, ${declared[2]} edges`));
  const byCount = report.stdout.split('top 5 types by count')[1].split('\n\n')[0];
  assert.match(byCount, new RegExp(`\\n\\s+${digits(N)}\\s+${digits(40 * N)}\\s+${digits(72 * N)}\\s+Retained\\n`), byCount);
  assert.match(byCount, new RegExp(`\\n\\s+${digits(N)}\\s+${digits(32 * N)}\\s+${digits(32 * N)}\\s+Leaf\\n`));
  const json = JSON.parse((await gcdump(t, ['report', dump, '--json', '--top', '100000']).done).stdout);
  assert.equal(json.nodes, Number(declared[1].replaceAll(',', '')));
  assert.equal(json.edges, Number(declared[2].replaceAll(',', '')));

  // The export, read by a parser nobody here wrote: the same node, edge and per-class counts.
  const exported = join(dir, 'first.heapsnapshot');
  const c = await gcdump(t, ['convert', dump, '-o', exported]).done;
  assert.equal(c.code, 0, c.stderr);
  const theirs = independent(exported);
  assert.equal(theirs.nodes, json.nodes);
  assert.equal(theirs.nodeArray, json.nodes);
  assert.equal(theirs.edges, json.edges);
  assert.deepEqual(theirs.declared, { nodes: json.nodes, edges: json.edges });
  // That parser knows fewer node types: the ones it does not know are all '(unknown)' to it.
  let unknown = 0;
  for (const row of json.byCount) {
    if (theirs.classes.has(row.name)) assert.equal(theirs.classes.get(row.name), row.count, row.name);
    else unknown += row.count;
  }
  assert.equal(theirs.classes.get('(unknown)') ?? 0, unknown);

  // V8's own snapshot of the same heap (taken a moment later), read by the same parser.
  const own = join(dir, 'own.heapsnapshot');
  assert.match(await target.ask(`snapshot ${own}`), /^written/);
  const v8own = independent(own);
  assert.equal(v8own.classes.get('Retained'), N);
  assert.equal(v8own.classes.get('Leaf'), N);
  assert.equal(v8own.nodes, v8own.declared.nodes);
  assert.equal(v8own.edges, v8own.declared.edges);
  assert.ok(Math.abs(v8own.nodes - json.nodes) < json.nodes * 0.05, `V8's own file has ${v8own.nodes} nodes, the dump ${json.nodes}`);
  await waitFor('the session to end in the target', async () => (await processInfo(target.pid)).sessions.length === 0);
});

test('diff of two dumps of a growing heap names the growing class first', { timeout: 600_000 }, async (t) => {
  const target = await heapTarget(t, 20_000);
  const a = join(dir, 'a.gcdump');
  const b = join(dir, 'b.gcdump');
  assert.equal((await gcdump(t, ['collect', '--pid', String(target.pid), '-o', a]).done).code, 0);
  assert.equal(await target.ask('grow 30000'), 'grown 30000');
  assert.equal((await gcdump(t, ['collect', '--pid', String(target.pid), '-o', b]).done).code, 0);
  const d = await gcdump(t, ['diff', a, b, '--top', '3']).done;
  assert.equal(d.code, 0, d.stderr);
  const byCount = d.stdout.split('types by count change (B - A)\n')[1].split('\n');
  assert.match(byCount[1], /^\s+\+30,000\s+0\s+30,000\s+\+[\d,]+\s+Growing$/, d.stdout);
  const json = JSON.parse((await gcdump(t, ['diff', a, b, '--json']).done).stdout);
  assert.equal(json.byCountDelta[0].name, 'Growing');
  assert.equal(json.byCountDelta[0].countDelta, 30_000);
  assert.equal(json.byCountDelta.find((r) => r.name === 'Retained')?.countDelta ?? 0, 0);
});

test('two tools take gcdumps of one target at once: each gets its own snapshot, complete', { timeout: 600_000 }, async (t) => {
  const target = await heapTarget(t, 30_000);
  const files = [join(dir, 'both-1.gcdump'), join(dir, 'both-2.gcdump')];
  const runs = await Promise.all(files.map((f) => gcdump(t, ['collect', '--pid', String(target.pid), '--buffer-size', '2', '-o', f]).done));
  for (const [i, r] of runs.entries()) {
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /nothing dropped/);
    const report = await gcdump(t, ['report', files[i]]).done;
    assert.match(report.stdout, /\n\s+30,000\s+1,200,000\s+2,160,000\s+Retained\n/);
  }
  await waitFor('both sessions to end in the target', async () => (await processInfo(target.pid)).sessions.length === 0);
});

test('the tool killed (SIGKILL) mid-collect: the target frees the session, keeps serving, and a second gcdump works', { timeout: 600_000 }, async (t) => {
  const target = await heapTarget(t, 100_000);
  const dump = join(dir, 'killed.gcdump');
  const cli = gcdump(t, ['collect', '--pid', String(target.pid), '--buffer-size', '2', '-o', dump]);
  await streaming(cli);
  cli.child.kill('SIGKILL');
  await cli.done;
  assert.equal(await target.ask('ping'), 'pong');
  await waitFor('the session to be freed', async () => (await processInfo(target.pid)).sessions.length === 0, 60_000);
  assert.equal(existsSync(dump), false);
  const again = await gcdump(t, ['collect', '--pid', String(target.pid), '--buffer-size', '2', '-o', dump]).done;
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /nothing dropped/);
  const report = await gcdump(t, ['report', dump]).done;
  assert.match(report.stdout, /\n\s+100,000\s+[\d,]+\s+[\d,]+\s+Retained\n/);
});

test('the target exiting mid-collect: one clear line, exit 1, no dump', { timeout: 600_000 }, async (t) => {
  const target = await heapTarget(t, 100_000);
  const dump = join(dir, 'gone.gcdump');
  const cli = gcdump(t, ['collect', '--pid', String(target.pid), '-o', dump]);
  await streaming(cli);
  target.child.kill('SIGKILL');
  const r = await cli.done;
  assert.equal(r.code, 1);
  const lines = r.stderr.trim().split('\n').filter((l) => l.startsWith('tracepipe:'));
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], new RegExp(`^tracepipe: no dump written: process ${target.pid} exited during the heap snapshot \\([\\d,]+ of [\\d,]+ nodes, [\\d,]+ of [\\d,]+ edges received\\)$`));
  assert.equal(existsSync(dump), false);
  noTemporaries();
});

test('a tool that stalls past the block timeout: the target drops (block-timeout) and goes on; no dump is written', { timeout: 600_000 }, async (t) => {
  const target = await heapTarget(t, 100_000);
  const dump = join(dir, 'stalled.gcdump');
  const cli = gcdump(t, ['collect', '--pid', String(target.pid), '--buffer-size', '1', '-o', dump]);
  await streaming(cli);
  cli.child.kill('SIGSTOP');
  // The target fills its 1 MB and the socket, parks, and after 5 s without progress drops instead.
  await new Promise((r) => setTimeout(r, 8000));
  cli.child.kill('SIGCONT');
  const r = await cli.done;
  assert.equal(r.code, 1, r.stdout);
  // The reasons come with the end of the stream; should the target be too busy to stop the session
  // cleanly, the tool closes it and reports the count the sequence points carried.
  assert.match(r.stderr, /tracepipe: no dump written: [\d,]+ events? (was|were) dropped( \([\d,]+ block-timeout\))?\n/);
  assert.equal(existsSync(dump), false);
  assert.equal(await target.ask('ping'), 'pong');
});

test('bad arguments and files: one line each', async (t) => {
  const cases = [
    [['collect', '--pid', 'x'], 2, /--pid must be a process id/],
    [['collect', '--pid', '999999999'], 1, /no process with pid 999999999/],
    [['collect', '--pid', String(process.pid), '--buffer-size', '0.5'], 2, /--buffer-size must be a number of MiB, at least 1/],
    [['frobnicate'], 2, /unknown gcdump command 'frobnicate'/],
    [['report', join(dir, 'nothing.gcdump')], 1, /no such file/],
    [['report', HEAP_TARGET], 1, /is not a tracepipe \.gcdump file/],
    [['report', HEAP_TARGET, '--top', '0'], 2, /--top must be a whole number, at least 1/],
  ];
  for (const [args, code, message] of cases) {
    const r = await gcdump(t, args).done;
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, message);
  }
  // A command line that does not fit: what is wrong, then the usage line.
  const usage = [
    [['collect'], 'tracepipe: missing --pid N for gcdump collect\nusage: tracepipe gcdump collect --pid N [options]\n'],
    [['diff', HEAP_TARGET], 'tracepipe: missing B for gcdump diff\nusage: tracepipe gcdump diff A B [options]\n'],
    [['convert', HEAP_TARGET], 'tracepipe: missing --output OUT.heapsnapshot for gcdump convert\nusage: tracepipe gcdump convert FILE -o OUT.heapsnapshot [options]\n'],
  ];
  for (const [args, stderr] of usage) {
    const r = await gcdump(t, args).done;
    assert.equal(r.code, 2);
    assert.equal(r.stderr, stderr);
  }
  const help = await gcdump(t, ['--help']).done;
  assert.match(help.stdout, /tracepipe gcdump collect --pid N/);
});
