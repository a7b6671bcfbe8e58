// A program that reads a whole trace with readTrace (the library's public reader) and prints what it
// saw as JSON: events, those delivered out of order, and the TraceFormatError that stopped it, if any.
import { readTrace, TraceFormatError } from '../../dist/index.js';

const trace = readTrace(process.argv[2]);
let events = 0;
let error;
try {
  for await (const e of trace) if (e.timestampNs >= 0) events++;
} catch (e) {
  if (!(e instanceof TraceFormatError)) throw e;
  error = { code: e.code, message: e.message };
}
process.stdout.write(`${JSON.stringify({ events, outOfOrder: trace.outOfOrder, error })}\n`);
process.exitCode = error ? 1 : 0;
