// Where an idle target's CPU goes, per thread: `node bench/counters/threads.mjs [tracepipe args...]`
// starts an idle process with `--import tracepipe/register` (and a startup session when
// STARTUP_PROVIDERS is set: `default` for the default profile, or a provider spec), runs the tracepipe
// CLI with the arguments given (PID stands for the target's pid) against it, and prints each thread's
// CPU (ms per second, from /proc/<pid>/task/*/schedstat) over 20 s from 33.5 s after start.
// Thread N is the one whose id is the target's pid + N: 0 the main thread, the first few V8's helpers,
// then the session's drain and the watchdog. Linux only.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SETTLE_MS = 32_000;
const WINDOW_MS = 20_000;
const args = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'tracepipe-threads-'));
const startup = process.env.STARTUP_PROVIDERS;
const env = { ...process.env };
if (startup) Object.assign(env, { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: join(dir, 'startup.tptrace'), ...(startup === 'default' ? {} : { TRACEPIPE_PROVIDERS: startup }) });
const target = spawn(process.execPath, ['--import', 'tracepipe/register', '-e', `setTimeout(() => {}, ${SETTLE_MS + WINDOW_MS + 30_000})`], { cwd: ROOT, stdio: 'ignore', env });
await new Promise((r) => setTimeout(r, 1500));
const tool = args.length > 0 ? spawn(process.execPath, [CLI, ...args.map((a) => a.replace('PID', String(target.pid))), '-o', join(dir, 'out')], { stdio: 'ignore' }) : undefined;

/** CPU ms so far of each thread of the target. */
function threads() {
  return Object.fromEntries(readdirSync(`/proc/${target.pid}/task`).map((id) => [Number(id) - target.pid, Number(readFileSync(`/proc/${target.pid}/task/${id}/schedstat`, 'utf8').split(' ')[0]) / 1e6]));
}
await new Promise((r) => setTimeout(r, SETTLE_MS));
const before = threads();
await new Promise((r) => setTimeout(r, WINDOW_MS));
const after = threads();
tool?.kill('SIGINT');
target.kill();
const perSecond = Object.entries(after).map(([n, ms]) => [n, (ms - (before[n] ?? 0)) / (WINDOW_MS / 1000)]);
console.log(`${startup ? `startup session ${startup}` : 'no startup session'}${args.length ? `, tracepipe ${args.join(' ')}` : ''}: ${perSecond.filter(([, v]) => v >= 0.005).map(([n, v]) => `thread ${n} ${v.toFixed(2)}`).join(', ') || 'nothing'}; total ${perSecond.reduce((s, [, v]) => s + v, 0).toFixed(2)} ms/s`);
setTimeout(() => rmSync(dir, { recursive: true, force: true }), 500);
