// `tracepipe query`: traces as DuckDB tables. Checked against `tracepipe stats` and `tracepipe dump`
// (counts, exact 64-bit values), against answers known in advance (a synthetic trace whose GC pauses
// are placed inside and around its stalls), and as a user meets it: bad SQL, --schema, several files,
// statements piped in, the prompt on a terminal.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runtimeEventLoop, runtimeGC } from '../dist/index.js';
import { assertOneLine, CLI, cli, dumpJsonl, richTrace, run, withCliAlone } from './helpers/convert-helpers.mjs';
import { parseCsv } from './helpers/reader-text.mjs';
import { prng } from './helpers/synthetic-trace.mjs';
import { writeTrace } from './helpers/trace-builder.mjs';

const SEED = Number(process.env.TRACEPIPE_TEST_SEED ?? 15);

let dir;
let rich;
let stats;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tracepipe-query-test-'));
  rich = (await richTrace(dir)).file;
  const s = await cli(['stats', rich, '--json']);
  assert.equal(s.code, 0, s.stderr);
  stats = JSON.parse(s.stdout);
  assert.ok(stats.dropped > 0 && stats.drops.length > 0, 'the fixture drops events');
});
after(() => rm(dir, { recursive: true, force: true }));

/** `tracepipe query ARGS --format csv`, parsed: { columns, rows } (cells as text). */
async function queryCsv(args) {
  const r = await cli(['query', ...args, '--format', 'csv']);
  assert.equal(r.code, 0, r.stderr);
  const [columns, ...rows] = parseCsv(r.stdout);
  return { columns, rows };
}

test('counts per table, per thread and of drops equal `tracepipe stats`', async () => {
  const { rows } = await queryCsv([rich, 'SELECT event, count(*) FROM events GROUP BY event ORDER BY event']);
  assert.deepEqual(Object.fromEntries(rows.map(([k, n]) => [k, Number(n)])), stats.byEvent);
  // Each event type's own table holds its events (--schema counts them).
  const schema = JSON.parse((await cli(['query', rich, '--schema', '--format', 'json'])).stdout);
  for (const [key, n] of Object.entries(stats.byEvent)) assert.equal(schema.find((t) => t.name === key)?.rows, n, key);
  const threads = await queryCsv([rich, 'SELECT thread_id, events, dropped FROM threads ORDER BY thread_id']);
  for (const [id, events, dropped] of threads.rows) {
    const s = stats.threads[id] ?? { events: 0, dropped: 0 };
    assert.deepEqual([Number(events), Number(dropped)], [s.events, s.dropped], `thread ${id}`);
  }
  assert.deepEqual(Object.keys(stats.threads).sort(), threads.rows.filter((r) => Number(r[1]) + Number(r[2]) > 0).map((r) => r[0]).sort());
  const drops = await queryCsv([rich, 'SELECT thread_id, first_seq, last_seq, count FROM drops ORDER BY thread_id, first_seq']);
  const expected = [...stats.drops].sort((a, b) => a.threadId - b.threadId || a.fromSeq - b.fromSeq).map((d) => [d.threadId, d.fromSeq, d.toSeq, d.count].map(String));
  assert.deepEqual(drops.rows, expected);
  const header = await queryCsv([rich, 'SELECT pid, events, dropped, damage FROM header']);
  assert.deepEqual(header.rows, [[String(stats.header.pid), String(stats.events), String(stats.dropped), '']]);
  // The rundown names the threads and their roles.
  const roles = await queryCsv([rich, "SELECT role FROM threads WHERE role IS NOT NULL ORDER BY thread_id"]);
  // The stall watchdog's (the trace's drain is native where the addon is built: no thread of Node's).
  assert.ok(roles.rows.some(([r]) => r === 'tracepipe-watchdog'), JSON.stringify(roles.rows));
});

test('u64 and i64 values round-trip exactly (beyond 2^53), in CSV, JSON and DuckDB arithmetic; every other field type as dump has it', async () => {
  const dump = await dumpJsonl(rich);
  const all = dump.events.filter((e) => e.provider === 'Convert.Fields' && e.name === 'All');
  const key = (t, s) => `${t}:${s}`;
  // Every other type too: strings (UTF-8), bytes (hex, as dump writes them), doubles and floats (as JavaScript prints them), booleans.
  const expected = new Map(all.map((e) => [key(e.threadId, e.sequence), [e.fields.u64, e.fields.i64, e.fields.s, e.fields.raw, String(e.fields.f64), String(e.fields.f32), String(e.fields.b)]]));
  assert.ok([...expected.values()].some(([u]) => BigInt(u) > 2n ** 53n), 'the fixture has u64 values above 2^53');
  const { rows } = await queryCsv([rich, 'SELECT thread_id, sequence, u64, i64, s, raw, f64, f32, b FROM "Convert.Fields/All"']);
  assert.equal(rows.length, all.length);
  for (const [t, s, ...values] of rows) assert.deepEqual(values, expected.get(key(t, s)), key(t, s));
  // JSON: exact integer literals (read back as bigints from their text).
  const j = await cli(['query', rich, 'SELECT u64, i64 FROM "Convert.Fields/All" ORDER BY thread_id, sequence LIMIT 5', '--format', 'json']);
  const literals = [...j.stdout.matchAll(/"u64":(\d+),"i64":(-?\d+)/g)].map((m) => [m[1], m[2]]);
  const firstFive = [...all].sort((a, b) => a.threadId - b.threadId || a.sequence - b.sequence).slice(0, 5).map((e) => [e.fields.u64, e.fields.i64]);
  assert.deepEqual(literals, firstFive);
  // The engine computes on the exact values.
  const sum = await queryCsv([rich, 'SELECT sum(u64)::VARCHAR, max(u64)::VARCHAR, min(i64)::VARCHAR FROM "Convert.Fields/All"']);
  const us = all.map((e) => BigInt(e.fields.u64));
  const is = all.map((e) => BigInt(e.fields.i64));
  assert.deepEqual(sum.rows[0], [us.reduce((a, b) => a + b, 0n), us.reduce((a, b) => (b > a ? b : a)), is.reduce((a, b) => (b < a ? b : a))].map(String));
});

/**
 * A main thread (0) with stalls, written by its watchdog (thread 2) as StallStart/StallEnd with
 * `thread` = 0, and GC pauses of thread 0 and of a worker (1) placed at random, plus pauses placed
 * on the edges (at a stall's first nanosecond, ending at its last, straddling either end).
 */
function stallScenario(seed) {
  const rnd = prng(seed);
  const events = [];
  const seq = new Map();
  const push = (type, threadId, timestampNs, values) => {
    const sequence = seq.get(threadId) ?? 0;
    seq.set(threadId, sequence + 1);
    events.push({ type, threadId, sequence, timestampNs, values });
    return sequence;
  };
  const stalls = [];
  let t = 1_000_000;
  for (let k = 0; k < 12; k++) {
    t += 20e6 + rnd.int(200) * 1e6;
    const lengthNs = 60e6 + rnd.int(400_000) * 1000; // whole microseconds: durationMs is exact in ns
    stalls.push({ a: t, b: t + lengthNs });
    t += lengthNs;
  }
  const pauses = [];
  for (const s of stalls) {
    pauses.push({ start: s.a, dur: 1e6, thread: 0 }); // first nanosecond: inside
    pauses.push({ start: s.b - 2e6, dur: 2e6, thread: 0 }); // ends on the last: inside
    pauses.push({ start: s.a - 1e6, dur: 3e6, thread: 0 }); // straddles the start: not inside
    pauses.push({ start: s.b - 1e6, dur: 3e6, thread: 0 }); // straddles the end: not inside
    pauses.push({ start: s.a + 5e6, dur: 1e6, thread: 1 }); // another thread's: not inside
  }
  for (let k = 0; k < 200; k++) pauses.push({ start: 500_000 + rnd.int(t), dur: 100_000 + rnd.int(5e6), thread: rnd.int(2) });
  // Time order, as a trace has them; the watchdog writes stalls, each thread its own pauses.
  const marks = [
    ...stalls.flatMap((s) => [
      { at: s.a + 60e6, write: () => push(runtimeEventLoop.StallStart, 2, s.a + 60e6, [0, 60]) },
      { at: s.b, write: () => push(runtimeEventLoop.StallEnd, 2, s.b, [0, (s.b - s.a) / 1e6]) },
    ]),
    ...pauses.map((p) => ({ at: p.start, write: () => (p.seq = push(runtimeGC.GCPause, p.thread, p.start, [BigInt(p.dur), 'scavenge', 0, 1e6, p.thread, 0])) })),
  ].sort((x, y) => x.at - y.at);
  for (const m of marks) m.write();
  const inside = pauses.filter((p) => p.thread === 0 && stalls.some((s) => p.start >= s.a && p.start + p.dur <= s.b));
  return { events, inside: inside.map((p) => `${p.thread},${p.seq}`).sort() };
}

test('a join of "Runtime.GC/GCPause" and "Runtime.EventLoop/StallEnd" finds exactly the pauses inside stalls', async () => {
  const file = join(dir, 'stalls.tptrace');
  const { events, inside } = stallScenario(SEED);
  await writeTrace(file, [runtimeGC.GCPause, runtimeEventLoop.StallStart, runtimeEventLoop.StallEnd], events);
  assert.ok(inside.length >= 24, `the scenario has pauses inside stalls (${inside.length})`);
  const sql = `SELECT p.thread_id, p.sequence
    FROM "Runtime.GC/GCPause" p JOIN "Runtime.EventLoop/StallEnd" s
      ON p.thread = s.thread
     AND p.timestamp_ns >= s.timestamp_ns - round(s.durationMs * 1e6)
     AND p.timestamp_ns + p.durationNs <= s.timestamp_ns`;
  const { rows } = await queryCsv([file, sql]);
  assert.deepEqual(rows.map((r) => r.join(',')).sort(), inside);
});

test('several files: one set of tables with a file column; each file keeps its own counts', async () => {
  const other = join(dir, 'other.tptrace');
  const { byKey } = await writeTrace(other, [runtimeGC.GCPause], [{ type: runtimeGC.GCPause, threadId: 0, sequence: 0, timestampNs: 5, values: [2n ** 64n - 1n, 'mark-compact', 1, 2, 0, 0] }]);
  const { rows } = await queryCsv([rich, other, 'SELECT file, event, count(*) FROM events GROUP BY ALL ORDER BY ALL']);
  const counts = (f) => Object.fromEntries(rows.filter((r) => r[0] === f).map(([, k, n]) => [k, Number(n)]));
  assert.deepEqual(counts(rich), stats.byEvent);
  assert.deepEqual(counts(other), byKey);
  const header = await queryCsv([rich, other, 'SELECT file, events FROM header ORDER BY file']);
  assert.deepEqual(header.rows, [[rich, String(stats.events)], [other, '1']].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  const pause = await queryCsv([rich, other, `SELECT durationNs FROM "Runtime.GC/GCPause" WHERE file = '${other}'`]);
  assert.deepEqual(pause.rows, [[String(2n ** 64n - 1n)]]);
  const schema = JSON.parse((await cli(['query', rich, other, '--schema', '--format', 'json'])).stdout);
  for (const t of schema) assert.equal(t.columns[0].name, 'file', `${t.name} starts with file`);
});

test('bad SQL: DuckDB\'s message on one line, nothing on stdout, exit 1', async () => {
  const parse = await cli(['query', rich, 'SELEC * FROM events']);
  assertOneLine(parse, 1, /^tracepipe: Parser Error: syntax error at or near "SELEC"/);
  assert.equal(parse.stdout, '');
  const missing = await cli(['query', rich, 'SELECT * FROM "Runtime.GC/Nope"']);
  assertOneLine(missing, 1, /^tracepipe: Catalog Error: Table with name Runtime\.GC\/Nope does not exist/);
  const runtime = await cli(['query', rich, "SELECT 'x'::INTEGER"]);
  assertOneLine(runtime, 1, /^tracepipe: Conversion Error/);
  assertOneLine(await cli(['query', rich, 'SELECT 1', '--format', 'xml']), 2, /^tracepipe: --format must be one of table, csv, json, not 'xml'$/);
  assertOneLine(await cli(['query', join(dir, 'nope.tptrace'), 'SELECT 1']), 1, /^tracepipe: no such file: /);
});

test('--schema lists every table and view with its columns and types', async () => {
  const r = await cli(['query', rich, '--schema', '--format', 'json']);
  assert.equal(r.code, 0, r.stderr);
  const schema = Object.fromEntries(JSON.parse(r.stdout).map((t) => [t.name, t]));
  const columns = (name) => schema[name].columns.map((c) => `${c.name} ${c.type}`);
  assert.deepEqual(columns('Convert.Fields/All'), [
    'timestamp_ns BIGINT', 'thread_id UINTEGER', 'sequence UBIGINT',
    'b BOOLEAN', 'u8 UTINYINT', 'i8 TINYINT', 'u16 USMALLINT', 'i16 SMALLINT', 'u32 UINTEGER', 'i32 INTEGER',
    'u64 UBIGINT', 'i64 BIGINT', 'f32 FLOAT', 'f64 DOUBLE', 's VARCHAR', 'raw BLOB',
  ]);
  assert.deepEqual(columns('Runtime.GC/GCPause').slice(3, 5), ['durationNs UBIGINT', 'kind VARCHAR']);
  assert.deepEqual(columns('drops'), ['timestamp_ns BIGINT', 'thread_id UINTEGER', 'first_seq UBIGINT', 'last_seq UBIGINT', 'count UBIGINT']);
  assert.deepEqual(columns('threads'), ['thread_id UINTEGER', 'name VARCHAR', 'role VARCHAR', 'events UBIGINT', 'dropped UBIGINT']);
  assert.deepEqual(columns('events'), ['event VARCHAR', 'timestamp_ns BIGINT', 'thread_id UINTEGER', 'sequence UBIGINT']);
  assert.equal(schema.events.kind, 'view');
  assert.equal(schema.header.rows, 1);
  assert.equal(schema.events.rows, stats.events);
  assert.deepEqual(Object.keys(schema).filter((n) => n.includes('/')).sort(), Object.keys(stats.byEvent).sort());
  // The text form: each table as SQL names it, its kind and rows, then its columns.
  const text = await cli(['query', rich, '--schema']);
  assert.match(text.stdout, /^"Runtime\.GC\/GCPause" {2}\(table, [\d,]+ rows\)\n {2}timestamp_ns +BIGINT\n/m);
});

test('table output: typed header, numbers right-aligned, NULL spelt out, long results cut with a count', async () => {
  const r = await cli(['query', rich, "SELECT 42::UBIGINT AS n, NULL AS x, 'a\nb' AS s UNION ALL SELECT 7::UBIGINT, 1, 'c'"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.deepEqual(lines.slice(0, 2).map((l) => l.split(/\s+/).filter(Boolean)), [['n', 'x', 's'], ['UBIGINT', 'INTEGER', 'VARCHAR']]);
  assert.ok(lines.some((l) => /^\s+42\s+NULL\s+a\\nb$/.test(l)), r.stdout);
  assert.match(r.stdout, /\(2 rows\)\n$/);
  const many = await cli(['query', rich, 'SELECT * FROM range(1500)']);
  assert.match(many.stdout, /\(1,500 rows, the first 1,000 shown \(--format csv or json prints every row\)\)\n$/);
  assert.equal(many.stdout.split('\n').length, 1000 + 3 + 2);
});

test('statements piped in run in order; without SQL and without a terminal it says what to do', async () => {
  const piped = await runWithInput(['query', rich, '--format', 'csv'], "CREATE TABLE t AS SELECT count(*) AS n FROM events;\nSELECT n FROM t;\n");
  assert.equal(piped.code, 0, piped.stderr);
  assert.equal(piped.stdout, `n\n${stats.events}\n`);
  const empty = await runWithInput(['query', rich], '');
  assert.equal(empty.code, 2);
  assert.equal(empty.stderr, 'tracepipe: no SQL: give a statement, pipe statements in, or run on a terminal for a prompt\nusage: tracepipe query FILE... ["SQL"] [options]\n');
});

/** Runs the CLI with `input` on stdin (closed after it). */
function runWithInput(args, input, { env = process.env, timeoutMs = 120_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? `killed (${signal})`, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

test('the prompt on a terminal: .tables, a statement over two lines, an error, .quit; history kept', async (t) => {
  // `script` (util-linux) gives the CLI a pseudo-terminal; what it reads is typed there.
  const history = join(dir, 'history');
  const env = { ...process.env, TRACEPIPE_HISTORY: history, TERM: 'dumb' };
  const typed = '.tables\nSELECT count(*) AS n\nFROM "Runtime.GC/GCPause";\nSELEC 1;\n.format csv\nSELECT 7 AS seven;\n.quit\n';
  const r = await runWithInputViaScript([CLI, 'query', rich], typed, env, t);
  if (!r) return;
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const out = r.stdout.replace(/\r/g, '');
  assert.match(out, /"Runtime\.GC\/GCPause"\n/);
  assert.match(out, new RegExp(`\\n\\s+${stats.byEvent['Runtime.GC/GCPause']}\\n\\(1 row\\)`));
  assert.match(out, /error: Parser Error: syntax error at or near "SELEC"/);
  assert.match(out, /seven\n7\n/);
  const saved = (await readFile(history, 'utf8')).split('\n');
  assert.ok(saved.includes('FROM "Runtime.GC/GCPause";') && saved.includes('.quit'), saved.join('|'));
});

/** `script -qec CMD /dev/null` with `input` on its stdin, ended by EOF; undefined (skipped) where `script` is missing outside CI. */
async function runWithInputViaScript(argv, input, env, t) {
  const command = argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const probe = await new Promise((resolve) => spawn('script', ['--version'], { stdio: 'ignore' }).on('error', () => resolve(false)).on('close', () => resolve(true)));
  if (!probe) {
    if (process.env.CI === 'true') throw new Error('script (util-linux) is missing; CI must have it');
    t.skip('script (util-linux) is not installed');
    return undefined;
  }
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', `${process.execPath} ${command}`, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? `killed (${signal})`, stdout, stderr });
    });
    // Typed once the prompt is up: lines sent before the terminal is in raw mode would be echoed twice.
    let sent = false;
    child.stdout.on('data', () => {
      if (sent || !stdout.includes('tracepipe> ')) return;
      sent = true;
      child.stdin.write(input);
    });
  });
}

test('a damaged trace: its intact events are queried, the damage is said first, exit 1', async () => {
  const cut = join(dir, 'cut.tptrace');
  await cp(rich, cut);
  await truncate(cut, Math.floor((await stat(cut)).size / 2));
  const s = JSON.parse((await cli(['stats', cut, '--json'])).stdout);
  assert.ok(s.error && s.events > 0, 'the cut trace is damaged and has intact events');
  const r = await cli(['query', cut, 'SELECT count(*) FROM events', '--format', 'csv']);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr.split('\n')[0], /is damaged \(.+\); its tables hold the intact part$/);
  assert.equal(r.stdout, `count_star()\n${s.events}\n`);
  const header = await queryCsvAllowingDamage([cut, 'SELECT damage IS NOT NULL FROM header']);
  assert.deepEqual(header, [['true']]);
});

async function queryCsvAllowingDamage(args) {
  const r = await cli(['query', ...args, '--format', 'csv']);
  assert.equal(r.code, 1, r.stderr);
  return parseCsv(r.stdout).slice(1);
}

test('without @tracepipe/analyze, query and report --html say in one line what to install and exit 2', async () => {
  await withCliAlone(async (main, alone) => {
    assertOneLine(await run(process.execPath, [main, 'query', rich, 'SELECT 1']), 2, /^tracepipe: tracepipe query needs the @tracepipe\/analyze package: npm install @tracepipe\/analyze$/);
    assertOneLine(await run(process.execPath, [main, 'report', rich, '--html', join(alone, 'r.html')]), 2, /^tracepipe: tracepipe report --html needs the @tracepipe\/analyze package: npm install @tracepipe\/analyze$/);
    // The text report needs nothing more.
    assert.equal((await run(process.execPath, [main, 'report', rich])).code, 0);
  });
});
