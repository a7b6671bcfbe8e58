// Writes `<events>` (10,000,000: about 5 s) steadily to a file session with CPU samples, yielding
// with setImmediate as a server would; prints the CPU of the process, of its main thread and of the
// other threads (the drain's, V8's compiler and GC threads), the ones that ended included.
// Run it under `node --trace-opt --trace-deopt` to see what V8 compiles and deoptimises.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineProvider, Level, startSession } from '../../dist/index.js';

const N = Number(process.argv[2] ?? 10_000_000);
const app = defineProvider('Bench.Compile', {
  events: {
    Request: { id: 1, level: Level.Informational, fields: [['ms', 'f64'], ['status', 'u32'], ['route', 'string'], ['bytes', 'i32']] },
  },
});
const ROUTES = ['/', '/users/42', '/items?page=2', '/health'];

const dir = mkdtempSync(join(tmpdir(), 'tracepipe-compile-'));
try {
  const session = await startSession({ providers: 'Bench.Compile,Runtime.CpuSampler', output: join(dir, 'compile.tptrace') });
  const E = app.Request;
  for (let n = 0; n < N; ) {
    for (let i = 0; i < 200; i++, n++) {
      // Durations are sometimes whole milliseconds: the f64 field holds small integers and doubles.
      if (E.enabled) E.write(n % 3 === 0 ? n % 50 : (n % 500) / 7, 200 + (n % 5), ROUTES[n & 3], n % 4096);
    }
    await new Promise(setImmediate);
  }
  await session.stop();
  // The process's CPU counts threads that have ended (the drain's); the main thread's is its schedstat.
  const cpu = process.cpuUsage();
  const processMs = (cpu.user + cpu.system) / 1e3;
  const mainMs = Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  console.log(JSON.stringify({ events: N, processMs, mainMs, otherThreadsMs: processMs - mainMs }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
