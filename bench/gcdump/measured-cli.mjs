// Runs the tracepipe CLI in this process (`node measured-cli.mjs <cli args>`) and, as it exits, writes
// its own peak RSS and CPU time as one JSON line to stderr: what the tool itself cost.
import { fileURLToPath } from 'node:url';

const started = performance.now();
process.on('exit', () => {
  const r = process.resourceUsage();
  process.stderr.write(`\nMEASURED ${JSON.stringify({ wallMs: performance.now() - started, cpuMs: (r.userCPUTime + r.systemCPUTime) / 1000, maxRssKB: r.maxRSS })}\n`);
});
process.argv = [process.argv[0], fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url)), ...process.argv.slice(2)];
await import('../../dist/cli/main.js');
