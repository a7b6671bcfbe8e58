// What a session's start costs (issue 24): `node bench/session-start.mjs [rounds]`.
// 1. What a startup session adds to `node -e 0`: interleaved variants, medians of wall, CPU and peak
//    RSS as GNU time reports them.
// 2. The drain thread's fixed cost against a bare Worker (an empty script, the floor of any thread
//    with a JavaScript isolate): in a process that has loaded tracepipe already, the time from the
//    call to the thread's first message, the process's CPU meanwhile and its RSS 300 ms later; and
//    the same for a second session started while one runs (each session has its own drain thread).
// 3. From the call of startSession to its first recorded event: one written as the call returns.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './support/stats.mjs';

const dist = new URL('../dist/', import.meta.url);

if (process.argv[2] === '--thread') {
  // One measurement in this process: argv[3] is 'bare Worker', 'drain' or 'second session's drain'.
  const { defineProvider, readTrace, startSession } = await import(new URL('index.js', dist).href);
  const bench = defineProvider('Bench.Nothing', { events: { Mark: { id: 1, fields: [['n', 'u32']] } } });
  const { Worker } = await import('node:worker_threads');
  const settle = () => new Promise((r) => setTimeout(r, 300));
  const first = process.argv[3] === "second session's drain" ? await startSession({ providers: 'Bench.Nothing', output: `${process.argv[4]}.first` }) : undefined;
  await settle();
  const rss0 = process.memoryUsage.rss();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let end;
  let firstEventMs = NaN;
  if (process.argv[3] === 'bare Worker') {
    const w = new Worker("require('node:worker_threads').parentPort.postMessage(0); setInterval(() => {}, 1000)", { eval: true });
    await new Promise((r) => w.once('message', r));
    end = () => w.terminate();
  } else {
    const starting = startSession({ providers: 'Bench.Nothing', output: process.argv[4] });
    bench.Mark.write(1);
    firstEventMs = performance.now() - t0;
    const s = await starting;
    end = async () => {
      await s.stop();
      for await (const e of readTrace(process.argv[4])) if (e.name === 'Mark') return;
      throw new Error('the first event is not in the trace');
    };
  }
  const startMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await settle();
  const rssMiB = (process.memoryUsage.rss() - rss0) / 2 ** 20;
  await end();
  await first?.stop();
  console.log(JSON.stringify({ startMs, cpuMs: (cpu.user + cpu.system) / 1000, rssMiB, firstEventMs }));
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'tp-session-start-'));
const rounds = Number(process.argv[2] ?? 15);

function table(title, runs, baseName, fields) {
  console.log(`${title} (${rounds} interleaved rounds, medians)`);
  const m = (name, k) => median(runs[name].map((r) => r[k]));
  for (const name of Object.keys(runs)) {
    const cells = fields.map(([k, label, unit, d]) => `${label} ${m(name, k).toFixed(d)} ${unit}${name === baseName ? '' : ` (+${(m(name, k) - m(baseName, k)).toFixed(d)})`}`);
    console.log(`  ${name.padEnd(36)} ${cells.join('  ')}`);
  }
}

// 1. The whole process.
const register = fileURLToPath(new URL('register.js', dist));
const variants = {
  'node -e 0': { args: ['-e', '0'], env: {} },
  register: { args: ['--import', register, '-e', '0'], env: {} },
  'startup session (default profile)': { args: ['--import', register, '-e', '0'], env: { TRACEPIPE_ENABLE: '1', TRACEPIPE_OUTPUT: join(dir, 's-{pid}.tptrace') } },
};
function timed({ args, env }) {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', process.execPath, ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
  const [wall, user, sys, rss] = r.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  return { wallMs: wall * 1000, cpuMs: (user + sys) * 1000, rssMiB: rss / 1024 };
}
const processes = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
for (let i = 0; i < rounds; i++) for (const [name, v] of Object.entries(variants)) processes[name].push(timed(v));
table('The process: added to node -e 0', processes, 'node -e 0', [['wallMs', 'wall', 'ms', 0], ['cpuMs', 'cpu', 'ms', 0], ['rssMiB', 'peak RSS', 'MiB', 1]]);

// 2. The drain thread against a bare Worker.
const threads = { 'bare Worker': [], drain: [], "second session's drain": [] };
for (let i = 0; i < rounds; i++) {
  for (const name of Object.keys(threads)) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--thread', name, join(dir, `t-${i}.tptrace`)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${name} failed: ${r.stderr}`);
    threads[name].push(JSON.parse(r.stdout));
  }
}
table('\nOne thread started in a process that has loaded tracepipe', threads, 'bare Worker', [['startMs', 'start', 'ms', 1], ['cpuMs', 'cpu', 'ms', 0], ['rssMiB', 'RSS', 'MiB', 1]]);
const firstEvent = threads.drain.map((r) => r.firstEventMs);
console.log(`\nstartSession called to its first event recorded (written as the call returns, found in the trace): median ${median(firstEvent).toFixed(2)} ms, max ${Math.max(...firstEvent).toFixed(2)} ms; the session resolved after ${median(threads.drain.map((r) => r.startMs)).toFixed(0)} ms`);
rmSync(dir, { recursive: true, force: true });
