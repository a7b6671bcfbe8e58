// Issue 21, item 15: names and values in a trace, a heap dump or another process's argv are
// anybody's. Through every command that prints text, a hostile one (a screen clear, a bell, a
// carriage return, a C1 CSI, bidirectional overrides and isolates, DEL, a line break) reaches the
// terminal escaped, never raw; JSON outputs stay valid and give the names back exactly, and CSV
// written to a pipe stays exact.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeGcdump } from '../dist/heap/gcdump-file.js';
import { graphOf } from './helpers/heap-graph-of.mjs';
import { headerInfo } from './helpers/synthetic-trace.mjs';
import { writeTrace } from './helpers/trace-builder.mjs';
import { cli as run } from './helpers/convert-helpers.mjs';
import { startTarget, useTmpdir } from './helpers/ipc-processes.mjs';

const dir = await useTmpdir(after);

/** ESC [2J (clear the screen), BEL, CR, the C1 CSI (U+009B), RLO, LRI, PDI, DEL and a line break. */
const HOSTILE = '\x1b[2J\x07\r\u009b31m\u202edesrever\u2066\u2069\x7f\nnext';
/** Any of those but the line feed, which text output uses between its lines (a name's own line break is checked apart). */
const RAW_CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

function assertEscaped(text, what) {
  const m = RAW_CONTROL.exec(text);
  assert.equal(m, null, `${what}: U+${m?.[0].charCodeAt(0).toString(16).padStart(4, '0')} raw at ${m?.index} in ${JSON.stringify(text.slice(Math.max(0, (m?.index ?? 0) - 40), (m?.index ?? 0) + 40))}`);
}

/** Every text stream of a command: no raw control character; the name's own line break does not start a line. */
async function textOf(args) {
  const r = await run(args);
  assertEscaped(r.stdout, `${args.join(' ')}: stdout`);
  assertEscaped(r.stderr, `${args.join(' ')}: stderr`);
  assert.doesNotMatch(r.stdout, /^next/m, `${args.join(' ')}: a line break inside a name is escaped`);
  return r;
}

const provider = `Evil${HOSTILE}`;
const plain = { provider, name: `Event${HOSTILE}`, id: 1, version: 0, level: 4, keywords: 1n, fields: [[`field${HOSTILE}`, 'string'], ['n', 'u32']] };
const gc = { provider: 'Runtime.GC', name: 'GCPause', id: 1, version: 0, level: 4, keywords: 1n, fields: [['kind', 'string'], ['durationNs', 'f64']] };
const begin = { provider, name: `Span${HOSTILE}.Begin`, id: 2, version: 0, level: 4, keywords: 1n, fields: [['spanId', 'u64'], ['parentSpanId', 'u64']] };
const end = { provider, name: `Span${HOSTILE}.End`, id: 3, version: 0, level: 4, keywords: 1n, fields: [['spanId', 'u64'], ['error', 'bool'], ['errorName', 'string']] };
const trace = join(dir, 'hostile.tptrace');
await writeTrace(
  trace,
  [plain, gc, begin, end],
  [
    { type: begin, threadId: 0, sequence: 0, timestampNs: 1000, values: [1n, 0n] },
    { type: plain, threadId: 0, sequence: 1, timestampNs: 2000, values: [`value${HOSTILE}`, 7] },
    { type: gc, threadId: 0, sequence: 2, timestampNs: 3000, values: [`kind${HOSTILE}`, 2e6] },
    { type: end, threadId: 0, sequence: 3, timestampNs: 4000, values: [1n, true, `error${HOSTILE}`] },
    { type: begin, threadId: 0, sequence: 4, timestampNs: 5000, values: [2n, 0n] },
  ],
  { header: { ...headerInfo(), argv: ['node', `app${HOSTILE}.js`], hostname: `host${HOSTILE}`, processTitle: `title${HOSTILE}` } },
);
const key = `${plain.provider}/${plain.name}`;

test('stats, dump, report: names, values, argv and hostname escaped; the JSON forms give them back exactly', async () => {
  await textOf(['stats', trace]);
  const stats = JSON.parse((await textOf(['stats', trace, '--json'])).stdout);
  assert.equal(stats.byEvent[key], 1);
  assert.equal(stats.header.hostname, `host${HOSTILE}`);
  const text = (await textOf(['dump', trace])).stdout;
  assert.match(text, /Evil\\u001b\[2J\\u0007\\r\\u009b31m\\u202edesrever\\u2066\\u2069\\u007f\\nnext\/Event/, 'escaped where it was');
  const lines = (await textOf(['dump', trace, '--format', 'jsonl'])).stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 5);
  assert.equal(lines[1].provider, provider);
  assert.deepEqual(lines[1].fields, { [`field${HOSTILE}`]: `value${HOSTILE}`, n: 7 });
  const report = await textOf(['report', trace]);
  assert.match(report.stdout, /kind\\u001b\[2J/, 'the GC kind');
  assert.match(report.stdout, /Span\\u001b\[2J/, 'the span names');
  const json = JSON.parse((await textOf(['report', trace, '--json'])).stdout);
  assert.deepEqual(Object.keys(json.gc.byKind), [`kind${HOSTILE}`]);
});

test('query: table, JSON, schema and an error quoting a name escaped; CSV to a pipe exact', async () => {
  const table = `"${key.replaceAll('"', '""')}"`;
  const sql = `SELECT * FROM ${table}`;
  const shown = await textOf(['query', trace, sql]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /value\\u001b\[2J/);
  await textOf(['query', trace, '--schema']);
  const rows = JSON.parse((await textOf(['query', trace, sql, '--format', 'json'])).stdout);
  assert.equal(rows[0][`field${HOSTILE}`], `value${HOSTILE}`);
  const missing = await textOf(['query', trace, `SELECT "nothing${HOSTILE}" FROM ${table}`]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /nothing\\u001b\[2J/);
  const csv = await run(['query', trace, sql, '--format', 'csv']);
  assert.equal(csv.code, 0, csv.stderr);
  assert.ok(csv.stdout.includes(`"value${HOSTILE}"`), 'CSV is exact when it goes to a pipe');
});

test('gcdump report, diff, paths and leaks: type names and the argv escaped', async () => {
  const strings = ['', `Type${HOSTILE}`];
  const graph = graphOf(
    [
      { type: 'synthetic', name: '', self: 0, edges: [['element', 1, 1]] },
      { type: 'object', name: `Type${HOSTILE}`, self: 10, edges: [] },
    ],
    strings,
    { pid: 1, argv: ['node', `app${HOSTILE}.js`], nodeVersion: `v20${HOSTILE}`, takenAtMs: 0, durationMs: 1, skippedValues: 0 },
  );
  const a = join(dir, 'a.gcdump');
  const b = join(dir, 'b.gcdump');
  writeGcdump(a, graph);
  writeGcdump(b, graph);
  assert.match((await textOf(['gcdump', 'report', a])).stdout, /Type\\u001b\[2J/);
  assert.equal(JSON.parse((await textOf(['gcdump', 'report', a, '--json'])).stdout).byCount.some((t) => t.name === `Type${HOSTILE}`), true);
  await textOf(['gcdump', 'diff', a, b]);
  assert.match((await textOf(['gcdump', 'paths', a, '--type', `Type${HOSTILE}`])).stdout, /^Type\\u001b\[2J.* @3: retains 10 bytes/);
  await textOf(['gcdump', 'leaks', a, b, a, '--min-count', '1']);
});

test("ps and collect --pid: another process's argv escaped", async (t) => {
  const target = await startTarget(t, dir, { args: ['serve', HOSTILE] });
  const ps = await textOf(['ps']);
  assert.match(ps.stdout, new RegExp(`${target.pid} .*serve \\\\u001b\\[2J`));
  JSON.parse((await textOf(['ps', '--json'])).stdout);
  const collected = await textOf(['collect', '--pid', String(target.pid), '--providers', 'Test.App', '--duration', '300ms', '-o', join(dir, 'c.tptrace')]);
  assert.equal(collected.code, 0, collected.stderr);
  await target.exit();
});
