// One conversion of the convert benchmark, in its own process: `convert-one.mjs FORMAT INPUT OUTPUT`,
// through the same writers as `tracepipe convert` (FORMAT `read` runs the reader alone). Reports wall
// and CPU time, bytes in and out, and the process's peak RSS.
import { rmSync } from 'node:fs';
import { convertTrace } from '../../dist/export/convert-trace.js';
import { readTrace } from '../../dist/format/trace-reader.js';
import { CONVERT_FORMATS } from '../../dist/cli/convert/convert-formats.js';
import { reportResult } from '../support/variant-process.mjs';

const [format, input, output] = process.argv.slice(2);
rmSync(output, { recursive: true, force: true });
const cpu0 = process.cpuUsage();
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
  const writer = await CONVERT_FORMATS[format].create(output);
  const r = await convertTrace(input, writer);
  if (r.error) throw r.error;
  result = { events: r.events, bytesIn: r.bytesIn, bytesOut: r.output.bytes };
}
const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
const cpu = process.cpuUsage(cpu0);
rmSync(output, { recursive: true, force: true });
reportResult({ ...result, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, maxRssMB: process.resourceUsage().maxRSS / 1024 });
