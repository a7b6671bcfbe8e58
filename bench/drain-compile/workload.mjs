// Writes events steadily for `<seconds>` (5) to a file session with CPU samples, yielding with
// setImmediate as a server would; prints the CPU of the process and of the threads other than main.
// Run it under `node --trace-opt --trace-deopt` to see what V8 compiles and deoptimises.
import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineProvider, Level, startSession } from '../../dist/index.js';

const SECONDS = Number(process.argv[2] ?? 5);
const app = defineProvider('Bench.Compile', {
  events: {
    Request: { id: 1, level: Level.Informational, fields: [['ms', 'f64'], ['status', 'u32'], ['route', 'string'], ['bytes', 'i32']] },
  },
});
const ROUTES = ['/', '/users/42', '/items?page=2', '/health'];

/** CPU ns of every thread of this process, main thread first (schedstat's first field). */
function threadCpuNs() {
  const dir = '/proc/self/task';
  return readdirSync(dir).map((t) => ({ tid: Number(t), ns: Number(readFileSync(join(dir, t, 'schedstat'), 'utf8').split(' ')[0]) }));
}

const dir = mkdtempSync(join(tmpdir(), 'tracepipe-compile-'));
try {
  const session = await startSession({ providers: 'Bench.Compile,Runtime.CpuSampler', output: join(dir, 'compile.tptrace') });
  const E = app.Request;
  const end = performance.now() + SECONDS * 1000;
  let n = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 200; i++, n++) {
      // Durations are sometimes whole milliseconds: the f64 field holds small integers and doubles.
      if (E.enabled) E.write(n % 3 === 0 ? n % 50 : (n % 500) / 7, 200 + (n % 5), ROUTES[n & 3], n % 4096);
    }
    await new Promise(setImmediate);
  }
  await session.stop();
  const cpu = process.cpuUsage();
  const threads = threadCpuNs();
  const mainNs = threads.find((t) => t.tid === process.pid)?.ns ?? 0;
  const allNs = threads.reduce((s, t) => s + t.ns, 0);
  console.log(JSON.stringify({ events: n, processMs: (cpu.user + cpu.system) / 1e3, mainMs: mainNs / 1e6, otherThreadsMs: (allNs - mainNs) / 1e6 }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
