// Runs the tracepipe CLI of a build (`<dist>/cli/main.js ARGS…`) in a child Node with a preload that
// reports the process's own resource usage as it exits, and prints one JSON result: exit code (or
// the signal, or a timeout), wall time, CPU time and peak RSS. Optionally under `ulimit -n`.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const USAGE = fileURLToPath(new URL('./report-usage.mjs', import.meta.url));
const [dist, timeoutS, openFiles, ...args] = process.argv.slice(2);
const node = `${JSON.stringify(process.execPath)} --import ${JSON.stringify(USAGE)} ${JSON.stringify(`${dist}/cli/main.js`)} ${args.map((a) => JSON.stringify(a)).join(' ')}`;
const started = performance.now();
const child = spawn('sh', ['-c', `${openFiles === '-' ? '' : `ulimit -n ${openFiles} && `}exec ${node}`], { stdio: ['ignore', 'ignore', 'pipe'] });
let stderr = '';
child.stderr.setEncoding('utf8');
child.stderr.on('data', (d) => (stderr += d));
let timedOut = false;
const timer = setTimeout(() => {
  timedOut = true;
  child.kill('SIGKILL');
}, Number(timeoutS) * 1000);
child.on('close', (code, signal) => {
  clearTimeout(timer);
  const wallMs = performance.now() - started;
  const usage = /tracepipe-bench-usage=(\{.*\})/.exec(stderr);
  const u = usage ? JSON.parse(usage[1]) : {};
  const error = stderr.split('\n').find((l) => l.startsWith('tracepipe:')) ?? '';
  console.log(JSON.stringify({ code: timedOut ? `killed after ${timeoutS} s` : (signal ?? code), wallMs, cpuMs: u.cpuMs ?? NaN, maxRssMB: u.maxRssMB ?? NaN, error: error.slice(0, 160) }));
});
