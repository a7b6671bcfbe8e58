// What `gcdump leaks` costs on a large heap, beside `gcdump report` and `gcdump paths` on the same final
// dump: the heap target (test/fixtures/heap-target.mjs serve N) holds N instances of Retained; a
// baseline dump, then `grow K` (K instances of Growing, the leak), a target dump, a final dump; then
// leaks, report and paths --type Growing, each in its own process, interleaved for `rounds` rounds
// (wall time and peak RSS, medians). Not part of `npm run bench` (three snapshots of a large heap).
//   node bench/gcdump/leaks-scale.mjs [objects, default 2,000,000] [grown, default 100,000] [rounds, default 3]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { median } from '../support/stats.mjs';

const [objects = 2_000_000, grown = 100_000, rounds = 3] = process.argv.slice(2).map(Number);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MEASURED_CLI = fileURLToPath(new URL('./measured-cli.mjs', import.meta.url));

async function cli(args, env = {}) {
  const child = spawn(process.execPath, [MEASURED_CLI, 'gcdump', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`gcdump ${args[0]} exited ${code}: ${err.trim().split('\n').pop()}`);
  return { out, ...JSON.parse(/MEASURED (.*)/.exec(err)[1]) };
}

const dir = mkdtempSync(join(tmpdir(), 'tracepipe-leaks-scale-'));
const target = spawn(process.execPath, ['--import', 'tracepipe/register', join(ROOT, 'test/fixtures/heap-target.mjs'), 'serve', String(objects)], { cwd: ROOT, env: { ...process.env, TMPDIR: dir }, stdio: ['pipe', 'pipe', 'inherit'] });
const lines = createInterface({ input: target.stdout })[Symbol.asyncIterator]();
try {
  await lines.next();
  const files = [1, 2, 3].map((n) => join(dir, `leak-${n}.gcdump`));
  await cli(['collect', '--pid', String(target.pid), '-o', files[0]], { TMPDIR: dir });
  target.stdin.write(`grow ${grown}\n`);
  await lines.next();
  await cli(['collect', '--pid', String(target.pid), '-o', files[1]], { TMPDIR: dir });
  await cli(['collect', '--pid', String(target.pid), '-o', files[2]], { TMPDIR: dir });
  const runs = { leaks: [], report: [], paths: [] };
  const commands = { leaks: ['leaks', ...files], report: ['report', files[2]], paths: ['paths', files[2], '--type', 'Growing'] };
  let found;
  for (let r = 0; r < rounds; r++) {
    for (const name of Object.keys(commands)) {
      const m = await cli(commands[name]);
      runs[name].push(m);
      if (name === 'leaks') found = m.out.split('\n').find((l) => /^ {2}\S/.test(l));
    }
  }
  console.log(`${objects.toLocaleString('en-US')} Retained, ${grown.toLocaleString('en-US')} Growing; leaks' top group: ${found?.trim()}`);
  for (const [name, list] of Object.entries(runs)) {
    console.log(`  ${name}: wall ${median(list.map((x) => x.wallMs)).toFixed(0)} ms (${list.map((x) => x.wallMs.toFixed(0)).join(' / ')}), peak RSS ${(median(list.map((x) => x.maxRssKB)) / 1024).toFixed(0)} MiB`);
  }
} finally {
  target.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
