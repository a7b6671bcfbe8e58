// What a worker thread joining a running session costs the main thread: the longest gap between
// turns of a 1 ms interval, and the main thread's time on a CPU (its schedstat), from the worker's
// creation to its exit; and whether either thread
// loaded undici by then (a BroadcastChannel's MessageEvent does on Node 22 and 24): the main thread
// when it hears the worker's hello, the worker when it hears the main thread's answer.
// Rounds alternate between this build and another's dist/ when one is given:
//   node bench/startup/worker-join.mjs [rounds] [other dist/]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from '../support/stats.mjs';
import { threadCpu } from '../support/thread-cpu.mjs';

if (process.argv[2] === 'child') {
  const { Worker } = await import('node:worker_threads');
  const [entry, dir] = process.argv.slice(3);
  const tp = await import(entry);
  const session = await tp.startSession({ providers: 'Bench.Join', output: join(dir, 'join.tptrace') });
  let last = performance.now();
  let worstGapMs = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    worstGapMs = Math.max(worstGapMs, now - last);
    last = now;
  }, 1);
  const cpu0 = threadCpu();
  const worker = new Worker(
    `import(${JSON.stringify(entry)}).then(({ defineProvider }) => {
      defineProvider('Bench.Join', { events: { Mark: { id: 1, fields: [] } } }).Mark.write();
      // Long enough to hear the main thread's answer to its hello.
      setTimeout(() => require('node:worker_threads').parentPort.postMessage(process.moduleLoadList.some((m) => m.includes('undici'))), 300);
    });`,
    { eval: true },
  );
  const exited = once(worker, 'exit');
  const [workerUndici] = await once(worker, 'message');
  await exited;
  clearInterval(tick);
  const cpu1 = threadCpu();
  await session.stop();
  const mainUndici = process.moduleLoadList.some((m) => m.includes('undici'));
  process.stdout.write(JSON.stringify({ worstGapMs, cpuMs: cpu0 && cpu1 ? (cpu1.runNs - cpu0.runNs) / 1e6 : NaN, mainUndici, workerUndici }));
} else {
  const rounds = Number(process.argv[2] ?? 5);
  const builds = { 'this build': new URL('../../dist/index.js', import.meta.url).href };
  if (process.argv[3]) builds.other = pathToFileURL(join(process.argv[3], 'index.js')).href;
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-worker-join-'));
  const runs = Object.fromEntries(Object.keys(builds).map((b) => [b, []]));
  try {
    for (let r = 0; r < rounds; r++) {
      for (const [name, entry] of Object.entries(builds)) {
        runs[name].push(JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), 'child', entry, dir], { encoding: 'utf8', timeout: 60_000 })));
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`Node ${process.version}, ${rounds} processes each:`);
  for (const [name, list] of Object.entries(runs)) {
    const undici = (k) => `${list.filter((r) => r[k]).length}/${list.length}`;
    console.log(`  ${name}: main thread's longest gap ${median(list.map((r) => r.worstGapMs)).toFixed(1)} ms, on-CPU ${median(list.map((r) => r.cpuMs)).toFixed(0)} ms (medians); undici loaded by main ${undici('mainUndici')}, by the worker ${undici('workerUndici')}`);
  }
}
