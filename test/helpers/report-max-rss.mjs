// Preloaded with `node --import` into a child the tests measure: prints the process's own peak RSS
// (process.resourceUsage().maxRSS, in KiB) on stderr as it exits, however it exits.
import { writeSync } from 'node:fs';

process.on('exit', () => {
  writeSync(2, `maxRSS=${process.resourceUsage().maxRSS}\n`);
});
