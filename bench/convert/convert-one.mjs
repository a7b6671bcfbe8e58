// One conversion of the convert benchmark, in its own process: `convert-one.mjs FORMAT INPUT OUTPUT`,
// through the same writers and stages as `tracepipe convert`, on this process's main thread (the CLI
// uses a worker) so the converting thread's own CPU time can be read (FORMAT `read`: the reader alone). Reports wall
// time, CPU time (the process's, and the converting thread's own on-CPU and waiting times), bytes in
// and out, and the process's peak RSS.
import { rmSync } from 'node:fs';
import { convertTrace } from '../../dist/export/convert-trace.js';
import { readTrace } from '../../dist/format/trace-reader.js';
import { CONVERT_FORMATS } from '../../dist/cli/convert/convert-formats.js';
import { threadCpu } from '../support/thread-cpu.mjs';
import { reportResult } from '../support/variant-process.mjs';

const [format, input, output] = process.argv.slice(2);
rmSync(output, { recursive: true, force: true });
const cpu0 = process.cpuUsage();
const main0 = threadCpu();
const t0 = process.hrtime.bigint();
let result;
if (format === 'read') {
  let events = 0;
  let bytesIn = 0;
  for await (const b of readTrace(input).batches({ order: 'stream' })) {
    events += b.events.length;
    bytesIn = b.bytesRead;
  }
  result = { events, bytesIn, bytesOut: 0 };
} else {
  const f = CONVERT_FORMATS[format];
  const r = await convertTrace(input, await f.create(output));
  if (r.error) throw r.error;
  const files = f.finish ? await f.finish(r.output) : r.output;
  result = { events: r.events, bytesIn: r.bytesIn, bytesOut: files.bytes };
}
const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
const cpu = process.cpuUsage(cpu0);
const main1 = threadCpu();
rmSync(output, { recursive: true, force: true });
reportResult({
  ...result,
  wallMs,
  /** The whole process: the converting thread and the threads that write the output. */
  cpuMs: (cpu.user + cpu.system) / 1000,
  /** The converting (main) thread alone, on a CPU and runnable but waiting for one. */
  mainOnCpuMs: main0 && main1 ? (main1.runNs - main0.runNs) / 1e6 : undefined,
  mainWaitMs: main0 && main1 ? (main1.waitNs - main0.waitNs) / 1e6 : undefined,
  maxRssMB: process.resourceUsage().maxRSS / 1024,
});
