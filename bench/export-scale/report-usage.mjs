// Preloaded into the CLI the benchmark measures: its own CPU time and peak RSS, on stderr as it exits.
import { writeSync } from 'node:fs';

process.on('exit', () => {
  const u = process.resourceUsage();
  writeSync(2, `tracepipe-bench-usage=${JSON.stringify({ cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRssMB: u.maxRSS / 1024 })}\n`);
});
