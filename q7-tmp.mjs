import { Worker } from 'node:worker_threads';
const r = (l) => console.log(l, `rss ${(process.memoryUsage().rss / 1048576).toFixed(0)} maxrss ${(process.resourceUsage().maxRSS/1024).toFixed(0)}`);
const { fromWire } = await import('./dist/cli/convert/convert-job.js');
const { rmSync } = await import('node:fs'); rmSync('/tmp/cv/q7', { recursive: true, force: true });
const t0 = performance.now();
const result = await new Promise((res, rej) => {
  const w = new Worker(new URL('./dist/workers/convert-worker.js', import.meta.url), { workerData: { input: process.argv[2], format: process.argv[3], output: '/tmp/cv/q7' }, resourceLimits: { maxYoungGenerationSizeMb: Number(process.env.YG ?? 32) } });
  let out; w.on('message', (m) => { if (m.type === 'done') out = m.result; else if (m.type === 'failed') rej(fromWire(m.error)); });
  w.on('exit', () => res(out));
});
r(`YG=${process.env.YG} ${process.argv[3]} worker gone ${(performance.now()-t0).toFixed(0)} ms cpu ${(process.cpuUsage().user/1e3).toFixed(0)} ms`);
