// The tracepipe CLI end to end, as a user runs it: dump, stats, demo, and one-line errors.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { threadId } from 'node:worker_threads';
import { defineProvider, readTrace, startSession } from '../dist/index.js';
import { headerSize } from '../dist/format/stream-header.js';

const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const N = 25;

function cli(...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 60_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.killed ? `killed (${err.signal})` : err.code) : 0, stdout, stderr });
    });
  });
}

let dir;
let good;
let events;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tracepipe-cli-'));
  good = join(dir, 'good.tptrace');
  const p = defineProvider('Cli.App', {
    events: { Hello: { id: 3, version: 2, fields: [['route', 'string'], ['bytes', 'u32'], ['big', 'u64'], ['raw', 'bytes'], ['ok', 'bool']] } },
  });
  const s = await startSession({ providers: 'Cli.App', output: good, bufferSizeMB: 1 });
  for (let i = 0; i < N; i++) p.Hello.write(`/r${i}`, i * 10, 2n ** 64n - 1n - BigInt(i), Uint8Array.of(0xde, 0xad, i), i % 2 === 0);
  await s.stop();
  events = [];
  for await (const e of readTrace(good)) events.push(e);
});
after(() => rm(dir, { recursive: true, force: true }));

/** Where the first block of `kind` sits: { start, payload } byte offsets. */
function firstBlock(bytes, kind) {
  let at = headerSize(bytes.subarray(0, 16));
  while (at + 12 <= bytes.length) {
    const length = bytes.readUInt32LE(at + 4);
    if (bytes[at] === kind) return { start: at, payload: at + 12 };
    at += 12 + length;
  }
  throw new Error(`no block of kind ${kind}`);
}

/**
 * The rule for every user mistake: non-zero exit, nothing but one `tracepipe: ...` line on stderr;
 * a command line that does not fit the command adds its usage line (exit 2).
 */
function assertOneLineError(r, pattern) {
  assert.notEqual(r.code, 0, 'non-zero exit');
  assert.equal(typeof r.code, 'number', `exited by itself (${r.code})`);
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  if (lines.length === 2 && lines[1].startsWith('usage: tracepipe ')) assert.equal(r.code, 2, 'a usage error exits 2');
  else assert.equal(lines.length, 1, `exactly one line on stderr, got:\n${r.stderr}`);
  assert.match(lines[0], /^tracepipe: /);
  assert.match(lines[0], pattern);
  assert.doesNotMatch(r.stderr, /\n\s+at |internal error/, 'no stack trace');
}

test('dump FILE prints one text line per event: time, thread, sequence, provider/event, fields', async () => {
  const r = await cli('dump', good);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const lines = r.stdout.trimEnd().split('\n');
  assert.equal(lines.length, N);
  lines.forEach((line, i) => {
    const m = /^\s*(\d+\.\d{6})\s+T(\d+)\s+#(\d+)\s+Cli\.App\/Hello\s+(.*)$/.exec(line);
    assert.ok(m, `line ${i}: ${line}`);
    assert.equal(Number(m[1]), Number((events[i].timestampNs / 1e9).toFixed(6)));
    assert.deepEqual([Number(m[2]), Number(m[3])], [threadId, i]);
    assert.equal(m[4], `route="/r${i}" bytes=${i * 10} big="${2n ** 64n - 1n - BigInt(i)}" raw="dead${i.toString(16).padStart(2, '0')}" ok=${i % 2 === 0}`);
  });
});

test('dump FILE --format jsonl prints one JSON event per line (bigints as strings, bytes as hex)', async () => {
  const r = await cli('dump', good, '--format', 'jsonl');
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.equal(lines.length, N);
  lines.forEach((line, i) => {
    const e = JSON.parse(line);
    assert.deepEqual(e, {
      provider: 'Cli.App',
      name: 'Hello',
      id: 3,
      version: 2,
      level: 4,
      timestampNs: events[i].timestampNs,
      threadId,
      sequence: i,
      fields: { route: `/r${i}`, bytes: i * 10, big: String(2n ** 64n - 1n - BigInt(i)), raw: `dead${i.toString(16).padStart(2, '0')}`, ok: i % 2 === 0 },
    });
  });
});

test('stats FILE --json has events, dropped, threads and byEvent', async () => {
  const r = await cli('stats', good, '--json');
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(r.stdout);
  for (const k of ['events', 'dropped', 'threads', 'byEvent']) assert.ok(k in s, `key ${k}`);
  assert.equal(s.events, N);
  assert.equal(s.dropped, 0);
  assert.deepEqual(s.byEvent, { 'Cli.App/Hello': N });
  assert.deepEqual(s.threads, { [threadId]: { events: N, dropped: 0, dropReasons: { full: 0, 'too-large': 0, 'invalid-argument': 0, stopping: 0, 'block-timeout': 0, overwritten: 0 }, firstSeq: 0, lastSeq: N - 1 } });
  assert.equal(s.complete, true);
});

test('stats FILE prints counts per event and per thread', async () => {
  const r = await cli('stats', good);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^events\s+25 in /m);
  assert.match(r.stdout, /^dropped\s+0/m);
  assert.match(r.stdout, /by event:\n\s+Cli\.App\/Hello\s+25\n/);
  assert.match(r.stdout, new RegExp(`by thread:\\n\\s+thread ${threadId}\\s+25 events\\s+0 dropped`));
});

test('user mistakes print one tracepipe: line on stderr and exit non-zero, without a stack trace', async () => {
  const text = join(dir, 'notes.txt');
  await writeFile(text, 'just some text, long enough to hold a header\n'.repeat(3));
  const bytes = await readFile(good);
  const corrupt = join(dir, 'corrupt.tptrace');
  const flipped = Buffer.from(bytes);
  const events = firstBlock(bytes, 2);
  flipped[events.payload + 3] ^= 0x40; // inside the first events block's checksummed payload
  await writeFile(corrupt, flipped);
  const truncated = join(dir, 'truncated.tptrace');
  await writeFile(truncated, bytes.subarray(0, bytes.length - 30));
  const future = join(dir, 'future.tptrace');
  const newer = Buffer.from(bytes);
  newer.writeUInt16LE(9, 8);
  await writeFile(future, newer);
  const missing = join(dir, 'missing.tptrace');

  const cases = [
    [['dump', missing], /no such file: .*missing\.tptrace/],
    [['stats', missing], /no such file/],
    [['dump', text], /not a tracepipe trace/],
    [['stats', text, '--json'], /not a tracepipe trace/],
    [['dump', corrupt], /corrupt trace: .*at byte \d+/],
    [['stats', corrupt], /corrupt trace: .*at byte \d+/],
    [['dump', truncated], /truncated trace/],
    [['stats', truncated, '--json'], /truncated trace/],
    [['dump', future], /trace format 9\.\d+ is newer than this reader supports/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['dump', good, '--format', 'xml'], /--format must be text or jsonl/],
    [['dump', good, '--colour'], /^tracepipe: unknown option --colour for dump$/],
    [['stats', good, '--json=yes'], /^tracepipe: option --json of stats takes no value$/],
    [['dump'], /^tracepipe: missing FILE for dump$/],
    [['stats', good, good], /^tracepipe: too many arguments for stats: '.*good\.tptrace' \(it takes FILE\)$/],
    [['demo', '--duration', 'soon'], /--duration must be a positive number/],
  ];
  for (const [args, pattern] of cases) {
    const r = await cli(...args);
    assert.doesNotThrow(() => assertOneLineError(r, pattern), `tracepipe ${args.join(' ')}: exit ${r.code}, stderr ${JSON.stringify(r.stderr)}`);
  }
});

test('dump of a damaged file still prints every intact event before the error', async () => {
  const bytes = await readFile(good);
  const truncated = join(dir, 'cut.tptrace');
  await writeFile(truncated, bytes.subarray(0, bytes.length - 30));
  const r = await cli('dump', truncated, '--format', 'jsonl');
  assertOneLineError(r, /truncated trace/);
  assert.equal(r.stdout.trimEnd().split('\n').length, N, 'only the end-of-stream block was lost');
});

test('demo traces a sample app with two workers and prints its stats', async () => {
  const out = join(dir, 'demo.tptrace');
  const r = await cli('demo', '--duration', '300', '-o', out);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /handled \d+ \+ \d+ \+ \d+ requests; session wrote [\d,]+ events?, dropped \d+/);
  assert.match(r.stdout, /by event:[\s\S]*Demo\.App\/RequestStart/);
  assert.match(r.stdout, /by thread:/);
  const s = await readTrace(out).summary();
  assert.equal(s.complete, true);
  assert.equal(Object.keys(s.threads).length, 3, 'main thread and two workers');
  assert.ok(s.byEvent['Demo.App/RequestStart'] > 0 && s.byEvent['Demo.App/Tick'] > 0);
});
