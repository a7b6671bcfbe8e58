// Where an idle target's CPU goes, per thread: `node bench/counters/threads.mjs [tracepipe args...]`
// starts an idle process with `--import tracepipe/register` (and a startup session when
// STARTUP_PROVIDERS is set: `default` for the default profile, or a provider spec), runs the tracepipe
// CLI with the arguments given (PID stands for the target's pid) against it, and prints each thread's
// CPU (ms per second) and times it was put on a CPU (wakes per second), from
// /proc/<pid>/task/*/schedstat, over 20 s from 33.5 s after start (WINDOW_S, SETTLE_S + 1.5), and how
// many of those wakes followed a sleep of the thread's own (its voluntary context switches) and how
// many a preemption (involuntary ones, /proc/<pid>/task/*/status): a thread that wakes another
// thread on its CPU is often preempted by it, and a loaded machine preempts any thread, so a thread's
// runs can exceed the times it was woken. Threads are named by their comm
// (node's main thread, V8's `V8 DefaultWorke`, libuv's `libuv-worker`, workers by their `name`)
// and numbered by their id less the target's pid. Linux only.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** From when, and for how long (SETTLE_S and WINDOW_S change them: V8 optimises the periodic work's code for a minute or two). */
const SETTLE_MS = Number(process.env.SETTLE_S ?? 32) * 1000;
const WINDOW_MS = Number(process.env.WINDOW_S ?? 20) * 1000;
const args = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'tracepipe-threads-'));
const startup = process.env.STARTUP_PROVIDERS;
const env = { ...process.env };
if (startup) Object.assign(env, { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: join(dir, 'startup.tptrace'), ...(startup === 'default' ? {} : { TRACEPIPE_PROVIDERS: startup }) });
const target = spawn(process.execPath, ['--import', 'tracepipe/register', '-e', `setTimeout(() => {}, ${SETTLE_MS + WINDOW_MS + 30_000})`], { cwd: ROOT, stdio: 'ignore', env });
await new Promise((r) => setTimeout(r, 1500));
const tool = args.length > 0 ? spawn(process.execPath, [CLI, ...args.map((a) => a.replace('PID', String(target.pid))), '-o', join(dir, 'out')], { stdio: 'ignore' }) : undefined;

/** A thread's context switches so far, from its status file. */
function switches(task) {
  const status = readFileSync(`${task}/status`, 'utf8');
  const count = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { slept: count('voluntary_ctxt_switches'), preempted: count('nonvoluntary_ctxt_switches') };
}

/** CPU ms, runs and context switches so far of each thread of the target, by `comm:number`. */
function threads() {
  return Object.fromEntries(
    readdirSync(`/proc/${target.pid}/task`).map((id) => {
      const task = `/proc/${target.pid}/task/${id}`;
      const [ns, , runs] = readFileSync(`${task}/schedstat`, 'utf8').split(' ').map(Number);
      return [`${readFileSync(`${task}/comm`, 'utf8').trim()}:${Number(id) - target.pid}`, { ms: ns / 1e6, runs, ...switches(task) }];
    }),
  );
}
await new Promise((r) => setTimeout(r, SETTLE_MS));
const before = threads();
await new Promise((r) => setTimeout(r, WINDOW_MS));
const after = threads();
tool?.kill('SIGINT');
target.kill();
const perSecond = Object.entries(after).map(([n, a]) => {
  const b = before[n] ?? { ms: 0, runs: 0, slept: 0, preempted: 0 };
  const rate = (key) => (a[key] - b[key]) / (WINDOW_MS / 1000);
  return [n, rate('ms'), rate('runs'), rate('slept'), rate('preempted')];
});
const busy = perSecond.filter(([, ms, runs]) => ms >= 0.005 || runs >= 0.1);
console.log(
  `${startup ? `startup session ${startup}` : 'no startup session'}${args.length ? `, tracepipe ${args.join(' ')}` : ''}: ` +
    `${busy.map(([n, ms, runs, slept, preempted]) => `${n} ${ms.toFixed(2)} ms/s ${runs.toFixed(1)} wakes/s (after a sleep ${slept.toFixed(1)}, after a preemption ${preempted.toFixed(1)})`).join(', ') || 'nothing'}; ` +
    `total ${perSecond.reduce((s, [, ms]) => s + ms, 0).toFixed(2)} ms/s`,
);
setTimeout(() => rmSync(dir, { recursive: true, force: true }), 500);
