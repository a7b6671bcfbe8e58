// What the gcdump benchmarks share: where things are, running a measured tool in its own process, and
// memlab, the peer they compare with, installed on first use into bench/.cache/.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const OBJECTS = Number(process.env.BENCH_GCDUMP_OBJECTS ?? 2_000_000);
export const ROUNDS = Number(process.env.BENCH_GCDUMP_ROUNDS ?? 1);
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const TARGET = join(ROOT, 'test/fixtures/heap-target.mjs');
export const MEASURED_CLI = fileURLToPath(new URL('./measured-cli.mjs', import.meta.url));
export const PEER = fileURLToPath(new URL('./parse-peer.mjs', import.meta.url));
export const MEMLAB_DIR = join(ROOT, 'bench/.cache/memlab');

/** Runs a command to its end: its exit code and what it printed. */
export async function runProcess(cmd, args, env = {}) {
  const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const [code] = await once(child, 'exit');
  return { code, out, err };
}

/** The figures measured-cli.mjs prints on stderr. */
export const measured = (err) => JSON.parse(/MEASURED (.*)/.exec(err)[1]);

/** memlab 2.0.5 pins puppeteer, whose install downloads a browser: skipped, it is not needed to parse. */
export function memlabAvailable() {
  if (existsSync(join(MEMLAB_DIR, 'node_modules/@memlab/core/package.json'))) return true;
  mkdirSync(MEMLAB_DIR, { recursive: true });
  try {
    execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', MEMLAB_DIR, '@memlab/core@2.0.5'], {
      env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: '1' },
      stdio: 'ignore',
      timeout: 600_000,
    });
    return true;
  } catch {
    return false;
  }
}
