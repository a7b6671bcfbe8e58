// One measurement of the startup benchmark, in a fresh process:
//   import <specifier>        ms for `await import(specifier)`, the first thing the process does
//   session <file> [entry]    startSession({ providers: 'Runtime.GC,…', output: file }): ms from the call to the
//                             first event recorded in the trace (a probe event written every time the loop turns
//                             from the call on), to the call's resolve, and for stop(); entry (default 'tracepipe')
//                             is the module imported, another build's dist/index.js for a before/after
import { reportResult } from '../support/variant-process.mjs';

const [mode, arg, entry = 'tracepipe'] = process.argv.slice(2);

if (mode === 'import') {
  const t0 = performance.now();
  await import(arg);
  reportResult({ ms: performance.now() - t0 });
} else if (mode === 'session') {
  const { defineProvider, readTrace, startSession } = await import(entry);
  const probe = defineProvider('Bench.Startup', { events: { Probe: { id: 1, fields: [['sinceCallMs', 'f64']] } } });
  let probing = true;
  const t0 = performance.now();
  // Written whenever the loop turns from the call on: the earliest one in the trace is when recording began.
  const write = () => {
    probe.Probe.write(performance.now() - t0);
    if (probing) setImmediate(write);
  };
  const started = startSession({ providers: 'Runtime.GC,Bench.Startup', output: arg });
  write();
  const session = await started;
  const resolveMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 20));
  probing = false;
  const t1 = performance.now();
  await session.stop();
  const stopMs = performance.now() - t1;
  let firstEventMs = Infinity;
  for await (const e of readTrace(arg)) if (e.name === 'Probe') firstEventMs = Math.min(firstEventMs, e.fields.sinceCallMs);
  reportResult({ firstEventMs, resolveMs, stopMs });
}
