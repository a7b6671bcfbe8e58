// What a startup session adds to `node -e 0` (issue 24), interleaved variants, medians of wall, CPU and
// peak RSS as GNU time reports them: `node bench/session-start.mjs [rounds]`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './support/stats.mjs';

const register = fileURLToPath(new URL('../dist/register.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tp-session-start-'));
const variants = {
  'node -e 0': { args: ['-e', '0'], env: {} },
  register: { args: ['--import', register, '-e', '0'], env: {} },
  'startup session (default profile)': { args: ['--import', register, '-e', '0'], env: { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: join(dir, 's-{pid}.tptrace') } },
};

/** Wall seconds, CPU seconds and peak RSS (KiB) of one run, from GNU time. */
function once({ args, env }) {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', process.execPath, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
  const [wall, user, sys, rss] = r.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  return { wallMs: wall * 1000, cpuMs: (user + sys) * 1000, rssMiB: rss / 1024 };
}

const rounds = Number(process.argv[2] ?? 15);
const runs = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
for (let i = 0; i < rounds; i++) for (const [name, v] of Object.entries(variants)) runs[name].push(once(v));
rmSync(dir, { recursive: true, force: true });
const base = Object.fromEntries(['wallMs', 'cpuMs', 'rssMiB'].map((k) => [k, median(runs['node -e 0'].map((r) => r[k]))]));
console.log(`${rounds} interleaved rounds; medians (added to node -e 0)`);
for (const [name, rs] of Object.entries(runs)) {
  const m = (k) => median(rs.map((r) => r[k]));
  const plus = (k, d) => (name === 'node -e 0' ? '' : ` (+${(m(k) - base[k]).toFixed(d)})`);
  console.log(`  ${name.padEnd(36)} wall ${m('wallMs').toFixed(0)} ms${plus('wallMs', 0)}  cpu ${m('cpuMs').toFixed(0)} ms${plus('cpuMs', 0)}  peak RSS ${m('rssMiB').toFixed(1)} MiB${plus('rssMiB', 1)}`);
}
