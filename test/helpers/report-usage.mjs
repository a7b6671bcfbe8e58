// Preloaded (node --import) into a child whose peak memory and CPU time a test measures: at exit it
// writes process.resourceUsage() and the exit code, as JSON, to the file named by REPORT_USAGE_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.REPORT_USAGE_FILE;
if (file) {
  process.on('exit', (code) => {
    const u = process.resourceUsage();
    writeFileSync(file, JSON.stringify({ code, maxRSSBytes: u.maxRSS * 1024, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000 }));
  });
}
