// Issue 21, item 6: every file tracepipe writes is readable by its owner only (0600; a directory it
// makes, 0700), whatever the umask, an existing file it overwrites included; a temporary file is
// created under a name nobody can plant a symbolic link at. Each writer runs as a user runs it, under
// `umask 000` (so only tracepipe's own modes keep anything private); modes are read back with stat.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SYNTH_TYPES } from './helpers/synthetic-trace.mjs';
import { writeTrace } from './helpers/trace-builder.mjs';
import { CLI, startTarget, TARGET, useTmpdir } from './helpers/ipc-processes.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FLIGHT = fileURLToPath(new URL('./fixtures/flight-target.mjs', import.meta.url));
const HEAP_TARGET = fileURLToPath(new URL('./fixtures/heap-target.mjs', import.meta.url));
const dir = await useTmpdir(after);
chmodSync(dir, 0o755);

const modeOf = (path) => statSync(path).mode & 0o777;
const octal = (m) => `0${m.toString(8)}`;

/**
 * Runs `argv` under `umask 000`, from a shell that first plants each of `links` ([prefix, target]):
 * a symbolic link `<prefix>.<pid>.tmp` to `target`, the name a temporary file of the command would
 * have had before (the shell's pid is the command's: exec keeps it).
 */
function underUmask0(argv, { links = [], env = {}, uid, timeoutMs = 120_000 } = {}) {
  const plant = links.map((_, i) => `ln -s "$TARGET${i}" "$LINK${i}.$$.tmp" && `).join('');
  const vars = Object.fromEntries(links.flatMap(([prefix, target], i) => [[`LINK${i}`, prefix], [`TARGET${i}`, target]]));
  return new Promise((resolve) => {
    execFile('sh', ['-c', `${plant}umask 000 && exec "$@"`, 'sh', ...argv], { cwd: ROOT, env: { ...process.env, TMPDIR: dir, ...vars, ...env }, timeout: timeoutMs, uid }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.killed ? 'killed' : err.code) : 0, stdout, stderr });
    });
  });
}
const cli = (args, options) => underUmask0([process.execPath, CLI, ...args], options);

/** Every file and directory under `path` (itself included) with its mode. */
function modesUnder(path) {
  const out = [[path, modeOf(path)]];
  if (lstatSync(path).isDirectory()) for (const name of readdirSync(path)) out.push(...modesUnder(join(path, name)));
  return out;
}

function assertPrivate(path) {
  for (const [p, m] of modesUnder(path)) {
    const want = lstatSync(p).isDirectory() ? 0o700 : 0o600;
    assert.equal(m, want, `${p} is ${octal(m)}, not ${octal(want)}`);
  }
}

/** A file standing where an output goes, readable by all, as a file of another tool (or of an older tracepipe) is. */
function existing(path) {
  writeFileSync(path, 'old contents');
  chmodSync(path, 0o644);
  return path;
}

const trace = join(dir, 'source.tptrace');
await writeTrace(trace, SYNTH_TYPES.map((t) => t.d), [
  { type: SYNTH_TYPES[0].d, threadId: 0, sequence: 0, timestampNs: 1000, values: [1.5, 2, 3n, 'token=secret'] },
  { type: SYNTH_TYPES[1].d, threadId: 0, sequence: 1, timestampNs: 2000, values: [true, Uint8Array.of(1, 2)] },
]);

test('convert to every format and report --html: 0600 files (0700 directories) under umask 000, an existing output file made 0600', async () => {
  for (const [format, out] of [['perfetto', 'c.pftrace'], ['chrome', 'c.json'], ['jsonl', 'c.jsonl']]) {
    const path = existing(join(dir, out));
    const r = await cli(['convert', trace, '--to', format, '-o', path]);
    assert.equal(r.code, 0, `${format}: ${r.stderr}`);
    assert.notEqual(readFileSync(path, 'utf8'), 'old contents');
    assertPrivate(path);
  }
  for (const format of ['ctf', 'csv', 'parquet']) {
    const path = join(dir, `c-${format}`);
    const r = await cli(['convert', trace, '--to', format, '-o', path]);
    assert.equal(r.code, 0, `${format}: ${r.stderr}`);
    assert.ok(readdirSync(path).length >= 2, `${format}: files written`);
    assertPrivate(path);
  }
  const html = existing(join(dir, 'report.html'));
  const r = await cli(['report', trace, '--html', html]);
  assert.equal(r.code, 0, r.stderr);
  assertPrivate(html);
});

test('a session file, a flight recorder dump on request and on a crash: 0600 under umask 000, an existing file made 0600', async () => {
  const file = existing(join(dir, 'session.tptrace'));
  const dumped = existing(join(dir, 'asked.tptrace'));
  const script = `
    const { defineProvider, startSession, startFlightRecorder } = await import('tracepipe');
    const p = defineProvider('Test.Modes', { events: { E: { id: 1, fields: [['s', 'string']] } } });
    const s = await startSession({ providers: 'Test.Modes', output: ${JSON.stringify(file)} });
    p.E.write('secret');
    await s.stop();
    const rec = await startFlightRecorder({ providers: 'Test.Modes', sizeMB: 0.25, signal: false });
    p.E.write('secret');
    await rec.dump(${JSON.stringify(dumped)});
    await rec.stop();`;
  const r = await underUmask0([process.execPath, '--input-type=module', '-e', script]);
  assert.equal(r.code, 0, r.stderr);
  assertPrivate(file);
  assertPrivate(dumped);
  const crashes = join(dir, 'crashes');
  mkdirSync(crashes, { mode: 0o700 });
  const crash = await underUmask0([process.execPath, FLIGHT, 'throw', '100', crashes]);
  assert.equal(crash.code, 1, crash.stderr);
  const files = readdirSync(crashes);
  assert.equal(files.length, 1, crash.stderr);
  assertPrivate(join(crashes, files[0]));
});

test('collect -- CMD, collect --pid and recorder dump --pid: 0600 under umask 000, an existing file made 0600', async (t) => {
  const launched = existing(join(dir, 'launched.tptrace'));
  const r = await cli(['collect', '--providers', 'Test.App', '-o', launched, '--', process.execPath, TARGET, 'burst', '100', '0']);
  assert.equal(r.code, 0, r.stderr);
  assertPrivate(launched);
  const target = await startTarget(t, dir, { env: { TRACEPIPE_FLIGHT_RECORDER: '0.25', TRACEPIPE_FLIGHT_PROVIDERS: 'Test.App' } });
  const attached = existing(join(dir, 'attached.tptrace'));
  const a = await cli(['collect', '--pid', String(target.pid), '--providers', 'Test.App', '--duration', '500ms', '-o', attached]);
  assert.equal(a.code, 0, a.stderr);
  assertPrivate(attached);
  const recorded = existing(join(dir, 'recorded.tptrace'));
  const d = await cli(['recorder', 'dump', '--pid', String(target.pid), '-o', recorded]);
  assert.equal(d.code, 0, d.stderr);
  assertPrivate(recorded);
  await target.exit();
});

test('gcdump collect and convert: 0600 under umask 000, and a link planted at the old temporary name is not followed', async (t) => {
  const target = await startTarget(t, dir, { script: HEAP_TARGET, args: ['serve', '1000'] });
  const victim = join(dir, 'victim');
  writeFileSync(victim, 'untouched');
  const dump = join(dir, 'heap.gcdump');
  const c = await cli(['gcdump', 'collect', '--pid', String(target.pid), '-o', dump], { links: [[dump, victim]] });
  assert.equal(c.code, 0, c.stderr);
  assert.equal(readFileSync(victim, 'utf8'), 'untouched', 'the planted link was not followed');
  assert.ok(lstatSync(dump).isFile(), 'the dump is a file of its own');
  assertPrivate(dump);
  const snapshot = existing(join(dir, 'heap.heapsnapshot'));
  const v = await cli(['gcdump', 'convert', dump, '-o', snapshot], { links: [[snapshot, victim]] });
  assert.equal(v.code, 0, v.stderr);
  assert.equal(readFileSync(victim, 'utf8'), 'untouched', 'the planted link was not followed');
  assert.ok(lstatSync(snapshot).isFile(), 'the snapshot is a file of its own');
  assertPrivate(snapshot);
  await target.exit();
});

test("an existing file of another user is refused and left untouched (its owner could read it whatever its mode)", { skip: process.getuid?.() !== 0 && 'needs root, to run the CLI as another user' }, async (t) => {
  // A directory every user may write to, as /tmp is, holding a file of root's that everyone may write.
  const shared = await mkdtemp(join(tmpdir(), 'tracepipe-shared-'));
  t.after(() => rm(shared, { recursive: true, force: true }));
  chmodSync(shared, 0o777);
  const source = join(shared, 'source.tptrace');
  writeFileSync(source, readFileSync(trace));
  chmodSync(source, 0o644);
  const theirs = join(shared, 'theirs.jsonl');
  writeFileSync(theirs, 'theirs');
  chmodSync(theirs, 0o666);
  chownSync(theirs, 0, 0);
  const r = await cli(['convert', source, '--to', 'jsonl', '-o', theirs], { uid: 65534 });
  assert.notEqual(r.code, 0, 'refused');
  assert.match(r.stderr, /theirs\.jsonl exists and belongs to another user \(uid 0\)/);
  assert.equal(readFileSync(theirs, 'utf8'), 'theirs', 'nothing written, nothing truncated');
  // Root may change any file's mode, not its owner: a file planted by another user stays theirs.
  const planted = join(shared, 'planted.jsonl');
  writeFileSync(planted, 'planted');
  chmodSync(planted, 0o600);
  chownSync(planted, 65534, 65534);
  const asRoot = await cli(['convert', source, '--to', 'jsonl', '-o', planted]);
  assert.notEqual(asRoot.code, 0, 'refused');
  assert.match(asRoot.stderr, /planted\.jsonl exists and belongs to another user \(uid 65534\)/);
  assert.equal(readFileSync(planted, 'utf8'), 'planted', 'nothing written, nothing truncated');
});

test('a dump under a name tracepipe made up is created exclusively: a link planted at that name is not followed, its target untouched', async () => {
  const { startSession } = await import('../dist/index.js');
  const victim = join(dir, 'victim-of-a-dump.txt');
  writeFileSync(victim, 'precious');
  const planted = join(dir, 'tracepipe-flight-planted.tptrace');
  symlinkSync(victim, planted);
  const session = await startSession({ providers: 'Runtime.Process', bufferingMode: 'ring', bufferSizeMB: 1 });
  try {
    const r = await session.dump(planted, { newFile: true });
    assert.match(r.error ?? '', /EEXIST/);
    assert.equal(readFileSync(victim, 'utf8'), 'precious');
    assert.equal(lstatSync(planted).isSymbolicLink(), true);
  } finally {
    await session.stop();
  }
});
