// Runs a real npm package's own test suite twice, untraced and with a startup session of every
// runtime provider and Node.Channels, and compares the results test by test: tracing must change
// nothing an application (here, a test suite written elsewhere) can see. Used by
// test/transparency-suites.test.mjs (one suite, in CI) and scripts/transparency.mjs (the others).
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const REPORTER = fileURLToPath(new URL('./test-outcome-reporter.mjs', import.meta.url));
const REGISTER = fileURLToPath(new URL('../../dist/register.js', import.meta.url));
export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** Every runtime provider and Node.Channels, each with every keyword at Verbose. */
export const EVERY_RUNTIME_PROVIDER = ['Runtime.GC', 'Runtime.GCHeap', 'Runtime.EventLoop', 'Runtime.Process', 'Runtime.HeapSnapshot', 'Node.Channels'].map((p) => `${p}:*:Verbose`).join(',');

/** The installed package's folder (resolved from this repository, where it is a devDependency). */
export function packageDir(name) {
  return dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
}

/** The package's test files under `folder` whose names match `pattern`, sorted. */
export async function testFiles(dir, folder, pattern) {
  const entries = await readdir(join(dir, folder), { recursive: true });
  return entries.filter((f) => pattern.test(f)).map((f) => join(folder, f)).sort();
}

/** The environment of a run with an `--import` that does nothing: what any `--import` changes. */
export function importOnlyEnv() {
  const options = [process.env.NODE_OPTIONS, `--import=${fileURLToPath(new URL('./empty-import.mjs', import.meta.url))}`].filter(Boolean).join(' ');
  return { ...process.env, NODE_OPTIONS: options };
}

/** The environment of a traced run: a startup session writing one trace per process into `traceDir`. */
export function tracedEnv(traceDir, providers = EVERY_RUNTIME_PROVIDER) {
  const options = [process.env.NODE_OPTIONS, `--import=${REGISTER}`].filter(Boolean).join(' ');
  return { ...process.env, NODE_OPTIONS: options, TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: providers, TRACEPIPE_OUTPUT: join(traceDir, 'trace-{pid}.tptrace') };
}

/**
 * Runs `files` (relative to the package's folder `dir`) with node's test runner; resolves with each
 * test's outcome by key (file, then the names down to the test; a repeated name gets `#2`, `#3`...),
 * what each test file's process wrote to stderr (by file), the runner's exit code and its own
 * stderr. Killed after `timeoutMs`, which is then an error.
 */
export function runSuite({ dir, files, env = process.env, concurrency = 2, timeoutMs }) {
  const args = ['--test', `--test-concurrency=${concurrency}`, `--test-reporter=${REPORTER}`, '--test-reporter-destination=stdout', ...files];
  // Run from inside a test, the runner would report to ours (NODE_TEST_CONTEXT) instead of printing.
  const { NODE_TEST_CONTEXT, ...own } = env;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: dir, env: own, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (s) => (out += s));
    child.stderr.setEncoding('utf8').on('data', (s) => (err += s));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (signal !== null) return reject(new Error(`the test runner in ${dir} ended by ${signal} (over ${timeoutMs} ms?); stderr: ${err.slice(-2000)}`));
      const outcomes = new Map();
      const fileStderr = new Map();
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        const r = JSON.parse(line);
        if (r.stderr !== undefined) {
          const file = relative(dir, r.file) || r.file;
          fileStderr.set(file, (fileStderr.get(file) ?? '') + r.stderr);
          continue;
        }
        const base = [relative(dir, r.file) || r.file, ...r.path].join(' > ');
        let key = base;
        for (let n = 2; outcomes.has(key); n++) key = `${base} #${n}`;
        outcomes.set(key, { outcome: r.outcome, error: r.error });
      }
      resolve({ outcomes, fileStderr, code, stderr: err });
    });
  });
}

/** The tests whose outcome differs between two runs (or that only one run has), as readable lines. */
export function differences(a, b, labels = ['untraced', 'traced']) {
  const lines = [];
  for (const key of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(key);
    const y = b.get(key);
    if (x?.outcome === y?.outcome) continue;
    const say = (r) => (r === undefined ? 'absent' : r.outcome + (r.error ? ` (${r.error})` : ''));
    lines.push(`${key}: ${labels[0]} ${say(x)}, ${labels[1]} ${say(y)}`);
  }
  return lines;
}

/**
 * Stderr as far as tracing may not change it: without stack frames, which differ under any `--import`
 * (Node 20 then runs a CommonJS entry point through its ESM loader, whose frames a stack shows), and
 * with process ids (Node's `(node:1234)` warning prefix) and durations masked.
 */
export function comparableStderr(text) {
  return text
    .split('\n')
    .filter((l) => !/^\s+at /.test(l))
    .join('\n')
    .replace(/\(node:\d+\)/g, '(node:PID)')
    .replace(/\d+(\.\d+)? ?ms\b/g, 'N ms');
}

/** The test files whose processes wrote different stderr (comparableStderr) in two runs. */
export function stderrDifferences(a, b) {
  const files = new Set([...a.fileStderr.keys(), ...b.fileStderr.keys()]);
  return [...files].filter((f) => comparableStderr(a.fileStderr.get(f) ?? '') !== comparableStderr(b.fileStderr.get(f) ?? ''));
}

/** Counts by outcome, e.g. { pass: 537, fail: 1 }. */
export function tally(outcomes) {
  const t = {};
  for (const { outcome } of outcomes.values()) t[outcome] = (t[outcome] ?? 0) + 1;
  return t;
}
