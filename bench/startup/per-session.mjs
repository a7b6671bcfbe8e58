// What each further session costs a process, with each drain: one session running, then 4 more of a
// provider that writes nothing, to files; the process's RSS and CPU over the 4, per session. Each
// drain in a process of its own, `rounds` times (default 2), alternating:
//   node bench/startup/per-session.mjs [rounds]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ENTRY = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const FURTHER = 4;

if (process.argv[2] === 'child') {
  const { startSession } = await import(ENTRY);
  const dir = process.argv[3];
  const rss = () => process.memoryUsage().rss / 1048576;
  const first = await startSession({ providers: 'Bench.Nothing', output: join(dir, 's0.tptrace') });
  await new Promise((r) => setTimeout(r, 300));
  const base = rss();
  const cpu0 = process.cpuUsage();
  const sessions = [];
  for (let i = 1; i <= FURTHER; i++) sessions.push(await startSession({ providers: 'Bench.Nothing', output: join(dir, `s${i}.tptrace`) }));
  await new Promise((r) => setTimeout(r, 500));
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(JSON.stringify({ mb: (rss() - base) / FURTHER, cpuMs: (cpu.user + cpu.system) / 1000 / FURTHER }));
  for (const s of [first, ...sessions]) await s.stop();
} else {
  const rounds = Number(process.argv[2] ?? 2);
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-per-session-'));
  try {
    for (let r = 0; r < rounds; r++) {
      for (const [name, env] of [['native drain', {}], ['worker drain', { TRACEPIPE_NATIVE_DRAIN: '0' }]]) {
        const out = JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), 'child', dir], { env: { ...process.env, ...env } }).toString());
        console.log(`${name}: each further session +${out.mb.toFixed(2)} MB RSS, +${out.cpuMs.toFixed(1)} ms CPU`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
