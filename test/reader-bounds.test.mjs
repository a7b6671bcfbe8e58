// Structure-aware fuzzing of the reader: hostile but well-framed traces of 32 MB, built with the
// project's own encoders (helpers/hostile-traces.mjs), read by `tracepipe stats`, `tracepipe dump`
// and a program that iterates readTrace, each in its own process. Peak RSS must stay under 200 MB,
// and CPU time must grow linearly: reading the trace takes less than 3x what reading it at half the
// size takes (2x when linear, 4x when quadratic), counting only the CPU beyond the tool's own
// start-up (measured on an empty trace in the same run; runs of under a second are repeated and the
// least CPU kept, as short runs are the noisiest). Ratios, never absolute times.
// TRACEPIPE_FUZZ_SEED picks the traces (a number, or `random`); TRACEPIPE_BOUNDS_MB their size.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { getPriority, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HOSTILE_TRACES, writeHostileTrace } from './helpers/hostile-traces.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const READ_ALL = fileURLToPath(new URL('./helpers/read-all.mjs', import.meta.url));
const REPORT_USAGE = fileURLToPath(new URL('./helpers/report-usage.mjs', import.meta.url));
const SIZE = Number(process.env.TRACEPIPE_BOUNDS_MB ?? 32) * 2 ** 20;
/**
 * On every Node version. Largest in the last runs: Node 20, dump of bigPayloads, 134 MB; Node 24, stats
 * of sequencePointBomb, 152 MB (dump of manyTypes, once 201 MB there, 141 MB since dump formats into
 * one reused byte buffer). Dump of manyTypes once reached 213 MB in CI on Node 20: V8 had pretenured a
 * per-event literal (2 runs in 30 here, 221-225 MB); the CLI turns pretenuring off (cli/no-pretenuring.ts).
 */
const MAX_RSS = 200 * 2 ** 20;
/** A quarter of the input against all of it: linear work is x4, quadratic x16; the limit leaves room for a noisy machine. */
const MAX_TIME_RATIO = 8;
/** Below this much CPU beyond start-up, a run did too little work for a ratio to mean anything. */
const MIN_WORK_MS = 100;
/** A run shorter than this is repeated (3 in all) and the least CPU taken: short runs are the noisiest. */
const REPEAT_BELOW_MS = 1000;
/**
 * The bound is on the reader's memory, not on V8's young-generation policy: Node 20 caps a semi-space
 * at 16 MB, Node 22 and later grow it with the machine's memory (to 32 MB here), which alone moves a
 * reader's peak RSS by tens of MB (dump of manyTypes on Node 24: 180-190 MB without this flag, 141-150 MB
 * with it). Every Node version runs the tools with Node 20's cap.
 */
const SAME_YOUNG_GENERATION = ['--max-semi-space-size=16'];
/** A child that takes longer is killed and the test fails: nothing waits forever. */
const CHILD_DEADLINE_MS = 600_000;

// What is measured is CPU time and memory, which a lower priority does not change; it spares the
// tests that run alongside and measure time. The children (and the counting of dump's output) inherit it.
setPriority(Math.max(getPriority(), 10)); // lower only: raising it back needs privileges

const env = process.env.TRACEPIPE_FUZZ_SEED;
const SEED = env === 'random' ? (Date.now() ^ (Math.random() * 2 ** 31)) | 0 : Number(env ?? 20261122) | 0;

/** What each tool must say about each trace: exit 0, or exit 1 with this message (one line, never an internal error). */
const OK = { stats: 0, dump: 0, read: 0 };
const all = (message) => ({ stats: message, dump: message, read: message });
const EXPECTED = {
  ordinary: OK,
  threadBomb: { ...OK, stats: /^trace exceeds a reader limit: more than 16384 threads at byte \d+$/ },
  threadsAtLimit: OK,
  typeBomb: all(/^trace exceeds a reader limit: more than 65536 fields in all event types at byte \d+$/),
  wideEvents: OK,
  manyTypes: OK,
  lateEvent: OK,
  hostileEnd: OK,
  hostileSequencePoints: OK,
  hugeBlocks: OK,
  bigPayloads: OK,
  sequencePointBomb: OK,
  deepVarints: all(/^corrupt trace: varint longer than 8 bytes at byte \d+$/),
  truncatedHugeBlock: all(/^truncated trace: the last block is incomplete at byte \d+ \(\d+ bytes left over\)$/),
  hugeDeclaredLengths: all(/^corrupt trace: event payload runs past the end of its block at byte \d+$/),
};

/** Runs one tool on `file` in a child; resolves with its exit code, peak RSS, CPU time, stderr and what it printed. */
function measure(tool, file, dir) {
  const usageFile = join(dir, `usage-${tool}.json`);
  const args = tool === 'read' ? [READ_ALL, file] : tool === 'stats' ? [CLI, 'stats', file, '--json'] : [CLI, 'dump', file];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SAME_YOUNG_GENERATION, '--import', REPORT_USAGE, ...args], { env: { ...process.env, REPORT_USAGE_FILE: usageFile }, stdio: ['ignore', 'pipe', 'pipe'] });
    const kept = [];
    let lines = 0;
    let stderr = '';
    // dump prints hundreds of MB through a pipe, as `tracepipe dump | less` does: count lines, keep nothing.
    child.stdout.on('data', (b) => {
      if (tool === 'dump') for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) lines++;
      else kept.push(b);
    });
    child.stderr.on('data', (b) => (stderr += b));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${tool} ${file} did not finish within ${CHILD_DEADLINE_MS} ms`));
    }, CHILD_DEADLINE_MS);
    child.on('error', reject);
    child.on('close', async (code) => {
      clearTimeout(timer);
      try {
        const usage = JSON.parse(await readFile(usageFile, 'utf8'));
        const stdout = Buffer.concat(kept).toString();
        resolve({ code, stderr, lines, output: tool === 'dump' ? undefined : stdout.length ? JSON.parse(stdout) : undefined, ...usage });
      } catch (e) {
        reject(new Error(`${tool} ${file}: exit ${code}, no usage report (${e.message}); stderr: ${stderr}`));
      }
    });
  });
}

/** measure(), repeated while runs are short: the least CPU of them, and the highest peak RSS. */
async function measureSteadily(tool, file, dir) {
  const runs = [await measure(tool, file, dir)];
  while (runs.length < 3 && runs[0].cpuMs < REPEAT_BELOW_MS) runs.push(await measure(tool, file, dir));
  const least = runs.reduce((a, b) => (b.cpuMs < a.cpuMs ? b : a));
  return { ...least, maxRSSBytes: Math.max(...runs.map((r) => r.maxRSSBytes)) };
}

function checkOutcome(kind, tool, r) {
  const want = EXPECTED[kind][tool];
  const message = tool === 'read' ? r.output?.error?.message : /^tracepipe: (.*)\n$/.exec(r.stderr)?.[1];
  if (want === 0) {
    assert.equal(r.code, 0, `${kind} ${tool}: exit ${r.code}, ${r.stderr}`);
    return;
  }
  assert.equal(r.code, 1, `${kind} ${tool}: exit ${r.code}, ${r.stderr}`);
  assert.match(message ?? '', want, `${kind} ${tool}: ${r.stderr}`);
  if (tool !== 'read') assert.equal(r.stderr.split('\n').length, 2, `${kind} ${tool}: one line on stderr`);
}

const mb = (n) => `${(n / 2 ** 20).toFixed(0)} MB`;

/** CPU each tool spends on an empty trace: start-up, to be left out of the ratios. */
const startupMs = {};
before(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tracepipe-bounds-'));
  try {
    const empty = join(dir, 'empty.tptrace');
    writeHostileTrace('ordinary', empty, 0, SEED);
    for (const tool of ['stats', 'read']) {
      const runs = [];
      for (let i = 0; i < 3; i++) runs.push((await measure(tool, empty, dir)).cpuMs);
      startupMs[tool] = Math.min(...runs);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

for (const kind of Object.keys(HOSTILE_TRACES)) {
  test(`reader bounds: ${kind}`, async (t) => {
    assert.ok(EXPECTED[kind], `an expectation for ${kind}`);
    t.diagnostic(`seed ${SEED} (replay with TRACEPIPE_FUZZ_SEED=${SEED}), ${mb(SIZE)}`);
    const dir = await tempDir(t);
    const half = join(dir, `${kind}-quarter.tptrace`);
    const full = join(dir, `${kind}.tptrace`);
    writeHostileTrace(kind, half, SIZE / 4, SEED);
    writeHostileTrace(kind, full, SIZE, SEED);
    const runs = {};
    for (const tool of ['stats', 'read', 'dump']) {
      const big = tool === 'dump' ? await measure(tool, full, dir) : await measureSteadily(tool, full, dir);
      checkOutcome(kind, tool, big);
      assert.ok(big.maxRSSBytes < MAX_RSS, `${kind} ${tool}: peak RSS ${mb(big.maxRSSBytes)} (limit ${mb(MAX_RSS)})`);
      runs[tool] = big;
      let ratio = '';
      // dump costs what read costs plus the same formatting per event: its time is linear when read's is.
      if (tool !== 'dump') {
        const small = await measureSteadily(tool, half, dir);
        checkOutcome(kind, tool, small);
        const work = (r) => r.cpuMs - startupMs[tool];
        const r = work(big) / Math.max(work(small), MIN_WORK_MS);
        assert.ok(r < MAX_TIME_RATIO, `${kind} ${tool}: ${work(big).toFixed(0)} ms of CPU (beyond start-up) for ${mb(SIZE)}, ${work(small).toFixed(0)} ms for a quarter of it (ratio ${r.toFixed(2)}, limit ${MAX_TIME_RATIO})`);
        ratio = `, x${r.toFixed(2)} the work of a quarter of the input`;
      }
      t.diagnostic(`${tool}: exit ${big.code}, peak RSS ${mb(big.maxRSSBytes)}, ${big.cpuMs.toFixed(0)} ms CPU${ratio}`);
    }
    // Nothing lost on the way: every tool that read the trace through saw the same events.
    if (EXPECTED[kind].stats === 0 && EXPECTED[kind].read === 0) assert.equal(runs.read.output.events, runs.stats.output.events, `${kind}: readTrace and summary count the same events`);
    if (EXPECTED[kind].read === 0 && EXPECTED[kind].dump === 0) assert.equal(runs.dump.lines, runs.read.output.events, `${kind}: dump prints a line per event`);
    await rm(full);
    await rm(half);
  });
}
