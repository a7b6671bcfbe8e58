// How much a string costs a writer, by length: writeUtf8's loop, Node's UTF-8 encoder (Buffer's utf8Write,
// as writers call it from LONG_STRING units on), and a whole event of one string field, as main-thread
// instructions per call under callgrind, per Node.js version (BENCH_NODES, as http-instructions).
// Each count is one process: V8 compiles synchronously (--no-concurrent-recompilation), so a process
// meets the same tiers at the same call and counts the same every time; `none` is the loop around.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodesToMeasure } from '../support/pinned-http.mjs';

export const description = 'instructions a string costs a writer, by length: its own loop against Node\'s UTF-8 encoder, per Node.js version (callgrind)';

const CHILD = fileURLToPath(new URL('./child.mjs', import.meta.url));
const LENGTHS = [8, 16, 32, 64, 256];
const TIMEOUT_MS = 120_000;
/** Calls counted per process (in batches of 1,000, after 30,000 uncounted). */
const COUNTED = 10_000;

/** Main-thread instructions per call of one mode and length, in a fresh process under callgrind. */
function count(node, mode, length) {
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-string-cg-'));
  try {
    execFileSync('valgrind', ['--tool=callgrind', '--separate-threads=yes', '--zero-before=node::v8_utils::CachedDataVersionTag*', '--dump-before=node::v8_utils::UpdateHeapCodeStatisticsBuffer*', `--callgrind-out-file=${join(dir, 'cg.%p')}`, node.bin, '--no-concurrent-recompilation', CHILD, node.tree, mode, String(length), String(COUNTED)], { stdio: 'ignore', timeout: TIMEOUT_MS });
    // The window's dump of the main thread: part 1 of thread 1.
    const file = readdirSync(dir).find((f) => /\.1-01$/.test(f));
    if (!file) throw new Error(`no dump of the counted window (mode ${mode}, length ${length})`);
    const summary = /^(?:summary|totals): (\d+)/m.exec(readFileSync(join(dir, file), 'utf8'));
    return Number(summary[1]) / COUNTED;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run() {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  } catch (e) {
    return [{ check: 'string-write', value: `not run: valgrind cannot run (${e.code ?? e.message})`, target: 'report it', met: null }];
  }
  const checks = [];
  for (const node of nodesToMeasure()) {
    console.log(`  Node ${node.version}: instructions per call (the loop around subtracted)`);
    console.log(`  ${'units'.padStart(6)} ${'writeUtf8'.padStart(10)} ${'encoder'.padStart(10)} ${'loop/enc'.padStart(9)} ${'event'.padStart(8)}`);
    const none = count(node, 'none', 8);
    for (const length of LENGTHS) {
      const [loop, encoder, event] = ['loop', 'encoder', 'event'].map((m) => count(node, m, length));
      console.log(`  ${String(length).padStart(6)} ${(loop - none).toFixed(0).padStart(10)} ${(encoder - none).toFixed(0).padStart(10)} ${((loop - none) / (encoder - none)).toFixed(2).padStart(8)}x ${(event - none).toFixed(0).padStart(8)}`);
      if (length === 256) checks.push({ check: `Node ${node.version}: a 256-unit string, writeUtf8's loop / Node's encoder`, value: `${((loop - none) / (encoder - none)).toFixed(2)}x`, target: 'report it', met: null });
    }
  }
  return checks;
}
