// One measured read of the benchmark trace, in its own process. Variants: readTrace (every event
// decoded, in timestamp order), batches (the same, handed over in arrays: readTrace().batches()),
// summary (counts only), jsonl (the same events as JSON lines, parsed
// line by line: what reading structured logs costs). A dist directory other than ours may be named
// (the baseline build of a before/after comparison).
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { reportResult } from '../support/variant-process.mjs';

const [variant, file, dist] = process.argv.slice(2);
const { readTrace } = await import(pathToFileURL(`${dist}/index.js`).href);

let events = 0;
let check = 0;
const t0 = process.hrtime.bigint();
const cpu0 = process.cpuUsage();
if (variant === 'readTrace') {
  for await (const e of readTrace(file)) {
    events++;
    check += e.fields.c;
  }
} else if (variant === 'batches') {
  for await (const batch of readTrace(file).batches()) {
    for (const e of batch.events) {
      events++;
      check += e.fields.c;
    }
  }
} else if (variant === 'summary') {
  events = (await readTrace(file).summary()).events;
} else if (variant === 'jsonl') {
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    const e = JSON.parse(line);
    events++;
    check += e.fields.c;
  }
} else throw new Error(`unknown variant ${variant}`);
const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
const cpu = process.cpuUsage(cpu0);
reportResult({ events, check, wallMs, cpuMs: (cpu.user + cpu.system) / 1e3, maxRSSBytes: process.resourceUsage().maxRSS * 1024 });
