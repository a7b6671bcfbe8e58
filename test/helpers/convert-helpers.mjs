// Shared by the convert tests: the CLI as a user runs it, the reference events (`tracepipe dump`),
// the independent readers (babeltrace2, protoc) and the rich fixture trace.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { cp, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RICH_TRACE = fileURLToPath(new URL('../fixtures/rich-trace.mjs', import.meta.url));
/** Reports the process's peak RSS on stderr as it exits, for a child that runs the CLI. */
const REPORT_MAX_RSS = fileURLToPath(new URL('./report-max-rss.mjs', import.meta.url));

/** Runs a command; resolves with its exit code (or how it was killed) and output. */
export function run(file, args, { timeoutMs = 120_000, nodeArgs = [], env = process.env } = {}) {
  return new Promise((resolve) => {
    const argv = file === process.execPath ? [...nodeArgs, ...args] : args;
    execFile(file, argv, { timeout: timeoutMs, maxBuffer: 512 << 20, env }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.killed ? `killed (${err.signal})` : typeof err.code === 'number' ? err.code : String(err.code)) : 0, stdout, stderr });
    });
  });
}

export const cli = (args, options) => run(process.execPath, [CLI, ...args], options);

/** `tracepipe convert` in a child that reports its own peak RSS (process.resourceUsage().maxRSS, KiB). */
export async function convertMeasured(args, options) {
  const r = await run(process.execPath, [CLI, 'convert', ...args], { ...options, nodeArgs: ['--import', REPORT_MAX_RSS] });
  const m = /maxRSS=(\d+)/.exec(r.stderr);
  return { ...r, maxRssMB: m ? Number(m[1]) / 1024 : NaN };
}

/** The reference: every event as `tracepipe dump --format jsonl` prints it (and its exit code). */
export async function dumpJsonl(file) {
  const r = await cli(['dump', file, '--format', 'jsonl']);
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  return { code: r.code, stderr: r.stderr, lines, events: lines.map((l) => JSON.parse(l)) };
}

/**
 * Whether `tool` is on PATH. Tests against it fail in CI (which installs it, .ci/run) and are skipped
 * locally, with the reason, when it is missing.
 */
export function needTool(t, tool, pkg) {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    const why = `${tool} is not installed (Debian package ${pkg})`;
    if (process.env.CI === 'true') throw new Error(`${why}; CI must install it (.ci/run)`);
    t.skip(why);
    return false;
  }
}

/** Writes the rich fixture trace (see fixtures/rich-trace.mjs) into `dir`; resolves with its path and session result. */
export async function richTrace(dir, { perThread = 2000, bufferMB = 1, name = 'rich.tptrace' } = {}) {
  const file = join(dir, name);
  // The 1 MB buffer is there to drop part of the workers' bursts, which the tests of drop ranges need;
  // a machine busy enough to starve the writers can let the drain keep up (seen once with two test
  // suites and a benchmark on 2 CPUs): then the trace is made again, at most three times in all.
  for (let attempt = 1; ; attempt++) {
    const r = await run(process.execPath, [RICH_TRACE, file, String(perThread), String(bufferMB)], { timeoutMs: 180_000 });
    if (r.code !== 0) throw new Error(`rich-trace.mjs failed (${r.code}): ${r.stderr}`);
    const result = JSON.parse(r.stdout.trim().split('\n').pop());
    if (bufferMB > 1 || result.eventsDropped > 0 || attempt === 3) return { file, result };
  }
}

/** Counts of the dump's events by `Provider/Event`. */
export function countByKey(events) {
  const n = {};
  for (const e of events) n[`${e.provider}/${e.name}`] = (n[`${e.provider}/${e.name}`] ?? 0) + 1;
  return n;
}

/** Block boundaries of a trace file: [{ kind, start, end }] after the header. */
export function blocksOf(bytes, headerEnd) {
  const blocks = [];
  for (let at = headerEnd; at + 12 <= bytes.length; ) {
    const end = at + 12 + bytes.readUInt32LE(at + 4);
    blocks.push({ kind: bytes[at], start: at, end });
    at = end;
  }
  return blocks;
}

/** A mistake or an unreadable input: exit `code`, and one line on stderr matching `pattern`. */
export function assertOneLine(r, code, pattern) {
  assert.equal(r.code, code, r.stderr);
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], pattern);
}

/**
 * Runs `fn(main, dir)` against a copy of the CLI alone, as `npm install tracepipe` leaves it: no
 * workspace and no node_modules anywhere above it, so @tracepipe/analyze cannot be found.
 */
export async function withCliAlone(fn) {
  const alone = await mkdtemp(join(tmpdir(), 'tracepipe-alone-'));
  try {
    await cp(join(ROOT, 'dist'), join(alone, 'dist'), { recursive: true });
    await cp(join(ROOT, 'package.json'), join(alone, 'package.json'));
    for (let d = alone; d !== dirname(d); d = dirname(d)) {
      await assert.rejects(stat(join(d, 'node_modules', '@tracepipe', 'analyze')), { code: 'ENOENT' }, `no ${d}/node_modules/@tracepipe/analyze`);
    }
    await fn(join(alone, 'dist', 'cli', 'main.js'), alone);
  } finally {
    await rm(alone, { recursive: true, force: true });
  }
}
