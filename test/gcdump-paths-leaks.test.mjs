// Issue 25: why an object is alive (gcdump paths, and the holder gcdump report names) on graphs whose
// answer is known, then leak hunting end to end: a real http server whose module-level cache grows
// on each request, dumped in a series by gcdump collect --every --count, is found by gcdump leaks with
// the cache on its path; a server that only churns reports no leak. And every command's bad input.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeGcdump } from '../dist/heap/gcdump-file.js';
import { graphOf } from './helpers/heap-graph-of.mjs';
import { SHAPES } from './helpers/heap-shapes.mjs';
import { startCli, startTarget, useTmpdir } from './helpers/ipc-processes.mjs';

const dir = await useTmpdir(after);
const LEAK_SERVER = fileURLToPath(new URL('./fixtures/leak-server.mjs', import.meta.url));
const gcdump = (t, args) => startCli(t, dir, ['gcdump', ...args]).done;

const fanIn = join(dir, 'fan-in.gcdump');
writeGcdump(fanIn, SHAPES.fanIn(5).graph);

test('paths --type: the biggest instances first, one shortest path per immediate retainer, at most three', async (t) => {
  const r = await gcdump(t, ['paths', fanIn, '--type', 'Shared']);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.match(lines[0], /^Shared @17: retains 32 bytes \(self 32\)$/);
  assert.deepEqual(lines.slice(1), [0, 1, 2].map((i) => `  (array) @5 → [${i}] (element) → Holder @${7 + 2 * i} → shared (property) → Shared @17`));
  const json = JSON.parse((await gcdump(t, ['paths', fanIn, '--type', 'Holder', '--top', '2', '--json'])).stdout);
  assert.equal(json.objects.length, 2);
  assert.deepEqual(json.objects[0].paths, [[{ edge: 'holders (property)', node: '(array) @5' }, { edge: '[0] (element)', node: 'Holder @7' }]]);
});

test('paths --id: weak edges never make a path; an object reached only weakly says so', async (t) => {
  const strings = ['', 'Cache', 'Entry', 'Lonely', 'entry', 'ref', 'closure'];
  // root → Cache -weak-> Entry, root → (closure) -context-> Entry; root → Cache -weak-> Lonely only.
  const g = graphOf(
    [
      { type: 'synthetic', name: '', self: 0, edges: [['property', 1, 1], ['property', 6, 4]] },
      { type: 'object', name: 'Cache', self: 10, edges: [['weak', 4, 2], ['weak', 5, 3]] },
      { type: 'object', name: 'Entry', self: 20, edges: [] },
      { type: 'object', name: 'Lonely', self: 30, edges: [] },
      { type: 'closure', name: 'closure', self: 5, edges: [['context', 4, 2]] },
    ],
    strings,
  );
  const file = join(dir, 'weak.gcdump');
  writeGcdump(file, g);
  const entry = await gcdump(t, ['paths', file, '--id', '5']);
  assert.equal(entry.code, 0, entry.stderr);
  assert.equal(entry.stdout, 'Entry @5: retains 20 bytes (self 20)\n  closure (closure) @9 → entry (context) → Entry @5\n');
  const lonely = await gcdump(t, ['paths', file, '--type', 'Lonely']);
  assert.match(lonely.stdout, /Lonely @7: retains 30 bytes \(self 30\)\n {2}unreachable from the root/);
});

test('report names, for each top type by retained size, the object holding most of it', async (t) => {
  const r = await gcdump(t, ['report', fanIn, '--top', '3']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /\n {2}Holder: 100 % held by \(array\) @5\n/);
  const json = JSON.parse((await gcdump(t, ['report', fanIn, '--json'])).stdout);
  assert.deepEqual(json.byRetainedSize.find((row) => row.name === 'Holder').heldBy, { id: 5, name: '(array) @5', bytes: 5 * 32, byType: { name: '(array)', bytes: 5 * 32 } });
});

/** Starts the leak server; sends requests every few ms until `stop()`; resolves the count sent. */
async function serveAndLoad(t, mode) {
  const server = await startTarget(t, dir, { script: LEAK_SERVER, args: [mode] });
  const port = Number(server.ready.split(' ')[2]);
  const agent = new http.Agent({ keepAlive: false });
  let stopped = false;
  let sent = 0;
  const get = () =>
    new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: `/item/${sent++}`, agent, timeout: 30_000 }, (res) => res.resume().on('end', resolve));
      req.on('timeout', () => req.destroy(new Error('request timed out'))).on('error', reject);
    });
  const loop = (async () => {
    while (!stopped) {
      await get();
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  return { pid: server.pid, stop: async () => ((stopped = true), await loop, sent) };
}

// The two servers are independent and mostly wait out the 6 s between dumps: they run side by side.
test('leaks on a real http server: collect --every 6s --count 3 takes the series', { timeout: 300_000, concurrency: 2 }, async (t) => {
  const leaksOn = async (t, mode) => {
    const server = await serveAndLoad(t, mode);
    await new Promise((r) => setTimeout(r, 500));
    const pattern = join(dir, `${mode}-{n}.gcdump`);
    const c = await gcdump(t, ['collect', '--pid', String(server.pid), '--every', '6s', '--count', '3', '-o', pattern]);
    const sent = await server.stop();
    assert.equal(c.code, 0, c.stderr);
    assert.equal(c.stdout.match(/^wrote /gm).length, 3, c.stdout);
    const files = [1, 2, 3].map((n) => pattern.replace('{n}', n));
    const r = await gcdump(t, ['leaks', ...files, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const json = JSON.parse(r.stdout);
    if (mode === 'churn') {
      assert.equal(json.groupCount, 0, JSON.stringify(json.groups.slice(0, 3)));
      assert.match((await gcdump(t, ['leaks', ...files])).stdout, /: no leak: /);
      return;
    }
    // Dumps start 6 s apart and take a second or two: requests arrive between the first two.
    assert.ok(sent > 60, `${sent} requests`);
    const top = json.groups[0];
    assert.equal(top.type, 'SessionRecord', JSON.stringify(json.groups.slice(0, 3)));
    assert.ok(top.count >= 20, `${top.count} records`);
    assert.match(top.path, /requestCache \(context\) → Map → table \(internal\)/);
    // Every leaked record is one allocated between the first two dumps: fewer than the requests sent.
    assert.ok(top.count < sent);
    const text = (await gcdump(t, ['leaks', ...files, '--top', '1'])).stdout;
    assert.match(text, /\n {2}SessionRecord: [\d,]+ objects, [\d,]+ bytes self, [\d,]+ retained\n {4}path: .*requestCache \(context\)/);
    const paths = await gcdump(t, ['paths', files[2], '--id', String(top.example.id)]);
    assert.match(paths.stdout, /^SessionRecord @\d+: .*\n {2}.*requestCache \(context\) → Map @\d+ → table \(internal\)/);
  };
  await Promise.all([
    t.test('leak: leaks finds the growing cache and its path', (t) => leaksOn(t, 'leak')),
    t.test('churn: leaks reports no leak', (t) => leaksOn(t, 'churn')),
  ]);
});

test('bad input: one clear line and a non-zero exit', async (t) => {
  const good = readFileSync(fanIn);
  const truncated = join(dir, 'truncated.gcdump');
  writeFileSync(truncated, good.subarray(0, good.length - 100));
  const notDump = join(dir, 'not.gcdump');
  writeFileSync(notDump, '{"snapshot":{}}');
  const other = join(dir, 'other.gcdump');
  writeGcdump(other, graphOf([{ type: 'synthetic', name: '', self: 0, edges: [] }], [''], { pid: 999, argv: ['node', 'other.js'], nodeVersion: 'v20', takenAtMs: 0, durationMs: 1, skippedValues: 0 }));
  const cases = [
    [['paths', truncated, '--type', 'Holder'], /truncated/],
    [['paths', notDump, '--type', 'Holder'], /not a tracepipe \.gcdump file/],
    [['paths', fanIn, '--type', 'Nothing'], /has no objects of type 'Nothing'/],
    [['paths', fanIn, '--id', '4'], /has no object with id 4/],
    [['paths', fanIn, '--id', 'x'], /--id must be a V8 object id/],
    [['paths', fanIn], /needs one of --type NAME or --id N\nusage: tracepipe gcdump paths/],
    [['paths', fanIn, '--type', 'Holder', '--id', '7'], /needs one of --type NAME or --id N\nusage: tracepipe gcdump paths/],
    [['leaks', fanIn, fanIn, truncated], /truncated/],
    [['leaks', notDump, fanIn, fanIn], /not a tracepipe \.gcdump file/],
    [['leaks', fanIn, other, fanIn], /are dumps of different processes \(process 1 .*process 999/],
    [['leaks', fanIn, fanIn], /usage: tracepipe gcdump leaks/],
    [['leaks', fanIn, fanIn, fanIn, '--min-count', '0'], /--min-count must be a whole number/],
    [['report', truncated], /truncated/],
    [['diff', fanIn, truncated], /truncated/],
    [['convert', notDump, '-o', join(dir, 'x.heapsnapshot')], /not a tracepipe \.gcdump file/],
    [['collect', '--pid', String(process.pid), '--every', '1s', '--count', '3', '-o', join(dir, 'x.gcdump')], /needs \{n\}/],
    [['collect', '--pid', String(process.pid), '--count', '3', '-o', join(dir, 'x-{n}.gcdump')], /--count needs --every/],
    [['collect', '--pid', String(process.pid), '--every', 'soon', '--count', '2', '-o', join(dir, 'x-{n}.gcdump')], /--every must look like 500ms/],
    [['collect', '--pid', String(process.pid), '--every', '1s', '--count', '0', '-o', join(dir, 'x-{n}.gcdump')], /--count must be a whole number, at least 1/],
  ];
  for (const [args, message] of cases) {
    const r = await gcdump(t, args);
    assert.notEqual(r.code, 0, args.join(' '));
    assert.equal(r.stdout, '', args.join(' '));
    // One line; a usage error adds the command's usage line (as every command's does).
    const lines = r.stderr.trim().split('\n');
    assert.ok(lines.length === 1 || (lines.length === 2 && lines[1].startsWith('usage: ')), `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
});

test('leaks: a growing Map’s new backing store (one object, a small group) does not hide the entries it holds', async () => {
  const { threeSnapshotLeaks } = await import('../dist/heap/three-snapshot-leaks.js');
  const N = 25;
  const strings = ['', 'cache', 'Map', 'table', 'Record', 'payload'];
  // root → Map (old) → table (new: the Map grew) → N Records (new), each → its payload array (new).
  const records = Array.from({ length: N }, (_, i) => ({ type: 'object', name: 'Record', self: 40, edges: [['property', 5, 3 + N + i]] }));
  const payloads = Array.from({ length: N }, () => ({ type: 'array', name: '', self: 100, edges: [] }));
  const g = graphOf(
    [
      { type: 'synthetic', name: '', self: 0, edges: [['property', 1, 1]] },
      { type: 'object', name: 'Map', self: 30, edges: [['internal', 3, 2]] },
      { type: 'array', name: '', self: 8 * N, edges: records.map((_, i) => ['element', i, 3 + i]) },
      ...records,
      ...payloads,
    ],
    strings,
  );
  const ids = g.column('nodes', 'id');
  const leaks = threeSnapshotLeaks(Float64Array.of(ids[0], ids[1]), Float64Array.from(ids).sort(), g, 20);
  assert.equal(leaks.groups[0].type, 'Record', JSON.stringify(leaks.groups));
  assert.equal(leaks.groups[0].retainedBytes, N * 140, 'each record with its payload');
  assert.equal(leaks.groups[1].retainedBytes, 0, 'the payloads are counted with their records, not twice');
  assert.deepEqual(leaks.small, { objects: 1, groups: 1 });
});
