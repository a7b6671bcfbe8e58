// Soak: is the RSS of a process sampled for a long time flat? `node bench/cpu-sampler/soak.mjs [MINUTES]`
// (default 10) runs the same workload untraced and with Runtime.CpuSampler at 1 ms, side by side,
// reads each one's RSS from /proc every 10 s, and prints both series and the growth from the
// median of the first quarter to the median of the last (the untraced one says what the workload
// itself does). The workload compiles new functions all the time, so V8's code map churns.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from '../support/stats.mjs';

if (process.argv[2] === 'workload') {
  // Work every 5 ms: parse and print JSON, and now and then a new function (compiled, run, dropped).
  let n = 0;
  setInterval(() => {
    const doc = JSON.parse(JSON.stringify({ n, items: Array.from({ length: 200 }, (_, i) => ({ i, s: `item ${i}` })) }));
    if (++n % 20 === 0) new Function('x', `return x * ${n} + ${doc.items.length};`)(n);
  }, 5);
} else {
  const minutes = Number(process.argv[2] ?? 10);
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-soak-'));
  const self = fileURLToPath(import.meta.url);
  const register = new URL('../../dist/register.js', import.meta.url).href;
  const start = (env, nodeArgs) => spawn(process.execPath, [...nodeArgs, self, 'workload'], { stdio: 'ignore', env: { ...process.env, ...env } });
  const untraced = start({}, []);
  const sampled = start({ TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: 'Runtime.CpuSampler', TRACEPIPE_OUTPUT: join(dir, 'soak.tptrace') }, [`--import=${register}`]);
  const rssMB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  const series = { untraced: [], sampled: [] };
  console.log(`soak: ${minutes} min, RSS (MB) every 10 s: untraced | Runtime.CpuSampler 1 ms`);
  const end = Date.now() + minutes * 60_000;
  const timer = setInterval(() => {
    series.untraced.push(rssMB(untraced.pid));
    series.sampled.push(rssMB(sampled.pid));
    console.log(`  ${((minutes * 60_000 - (end - Date.now())) / 60_000).toFixed(1)} min  ${series.untraced.at(-1).toFixed(1)} | ${series.sampled.at(-1).toFixed(1)}`);
    if (Date.now() < end) return;
    clearInterval(timer);
    untraced.kill();
    sampled.kill('SIGTERM');
    const growth = (s) => {
      const q = Math.max(1, Math.floor(s.length / 4));
      return median(s.slice(-q)) - median(s.slice(0, q));
    };
    console.log(`growth, first quarter to last (medians): untraced ${growth(series.untraced).toFixed(1)} MB, sampled ${growth(series.sampled).toFixed(1)} MB`);
    setTimeout(() => rmSync(dir, { recursive: true, force: true }), 1000);
  }, 10_000);
}
