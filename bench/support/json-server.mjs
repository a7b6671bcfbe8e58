// One server of the pinned HTTP benchmarks, in its own process (pinned to one CPU where possible):
// a node:http server answering ~500 bytes of JSON, with the variant's tracing installed before the
// application loads `http`. tracepipe's variants need nothing here: the coordinator starts this
// process with `--import tracepipe/register` and a startup session in its environment, as a user would.
// Over IPC: 'mark' and 'measured' bracket a measured load (the server's CPU time, every thread; its
// main thread's time on a CPU and waiting for one; and the requests it served meanwhile); 'flush'
// exports what a tracer has queued and says how many requests were served and the main thread's times
// so far; 'stop' closes the server and reports what it served in all, what OpenTelemetry exported, and
// what the startup session recorded, exported and dropped (stopping it flushes it, as the process's
// exit would).
import { createRequire } from 'node:module';
import { threadCpu, threadTicks } from './thread-cpu.mjs';

const variant = process.argv[2];

/**
 * The floor under any http tracer: subscribers that do nothing on the channels `Node.Channels`'
 * http events subscribe to, so Node publishes there as it does for tracepipe.
 */
async function installNodeHooks() {
  const { subscribe } = await import('node:diagnostics_channel');
  let seen = 0;
  for (const name of ['http.server.request.start', 'http.server.response.finish', 'http.client.request.start', 'http.client.response.finish', 'http.client.request.error']) subscribe(name, () => seen++);
}

/** The startup session's figures once stopped (tracepipe by its package name: the host's sessions). */
async function stopStartupSession() {
  const { liveSessions } = await import('tracepipe');
  const [session] = liveSessions();
  if (!session) throw new Error('no startup session is running');
  const { eventsWritten, eventsDropped, otlp, status, error } = await session.stop();
  if (status !== 'stopped') throw new Error(`the startup session failed: ${error?.message}`);
  return { eventsWritten, eventsDropped, otlp };
}

let tracing;
if (variant === 'node-hooks') await installNodeHooks();
else if (variant === 'opentelemetry') tracing = await (await import('./opentelemetry-tracing.mjs')).startOpenTelemetry();
else if (variant === 'opentelemetry-otlp') tracing = await (await import('./opentelemetry-tracing.mjs')).startOpenTelemetry({ otlp: true });
else if (variant !== 'plain') throw new Error(`unknown server variant '${variant}'`);

// Required, as a CommonJS application loads it: OpenTelemetry instruments modules as they are required.
const require = createRequire(import.meta.url);
const { createServer } = require('node:http');

// What applications make at startup besides their HTTP server: emitters of classes of their own (a
// pool, a queue, a bus), a file stream, a second server. With them Node's EventEmitter.init has seen more
// than V8's 4 kinds of receiver, as in an application with a few libraries, and its property accesses are
// megamorphic whatever a tracer adds. V8 records a function's feedback only from about its 8th call on
// (lazy feedback allocation), so each kind is made several times: made once each, within the process's
// first 8 calls, they went unrecorded in an untraced server, and a tracer whose own emitters (a worker
// and its stdio) moved that 8th call earlier got them recorded, which moved Node's own request code by
// ~2,000 instructions a request (BENCHMARKS.md §6). An application that stays at 4 kinds (a bare http
// server) pays that once any tracepipe session runs: its drain thread is a Worker, an emitter with
// stdio streams of its own (README.md, "Spans and counters").
{
  const { createReadStream } = require('node:fs');
  const { EventEmitter } = require('node:events');
  class Bus extends EventEmitter {}
  class Queue extends EventEmitter {}
  class Pool extends EventEmitter {}
  for (let i = 0; i < 10; i++) for (const Kind of [EventEmitter, Bus, Queue, Pool]) new Kind().on('tick', () => undefined);
  createReadStream(new URL(import.meta.url)).resume();
  require('node:net').createServer().listen(0, '127.0.0.1').unref();
}
let served = 0;
let handled = 0;
const countServed = (error) => {
  if (error == null) served++;
};
// The items are serialized once. JSON.stringify looks up toJSON on every object it writes, through V8's
// descriptor lookup cache, whose hits depend on where the process's maps happen to lie: the same 22
// objects a request cost ~4,500 instructions more in some fresh processes than in others, a difference
// between variants that was no tracer's doing (BENCHMARKS.md §6).
const ITEMS = JSON.stringify(Array.from({ length: 20 }, (_, i) => ({ i, label: `item-${i}` })));
const srv = createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  // Served once its response finished, as a tracer sees it: a pipelined request still in flight when
  // the load generator stops and closes its connection was handled but never answered.
  res.end(`{"path":${JSON.stringify(req.url)},"n":${handled++},"items":${ITEMS}}`, countServed);
});
// A connection idle between two loads (the instruction bench's warm-up and its counted requests, with
// Valgrind's control commands between them) stays open: the timer each response re-arms is the same.
srv.keepAliveTimeout = 10 * 60_000;
srv.listen(0, '127.0.0.1', () => process.send({ port: srv.address().port }));

let mark;
let stopping = false;
// Under the instruction bench, Valgrind zeroes its counts as 'mark' calls the first of these and dumps
// them as 'measured' calls the second (callgrind's --zero-before and --dump-before): the window is then
// exactly the requests counted here, and the load never pauses for a control command (see that bench).
const { cachedDataVersionTag: zeroCountsHere, getHeapCodeStatistics: dumpCountsHere } = require('node:v8');
const countedWindow = process.env.BENCH_CALLGRIND_WINDOW === '1';
// The coordinator gone (killed, crashed) without a 'stop': nothing else would end this server.
process.on('disconnect', () => stopping || process.exit(1));
process.on('message', async (m) => {
  if (m === 'mark') {
    if (countedWindow) zeroCountsHere();
    return process.send((mark = { cpu: process.cpuUsage(), served, main: threadCpu(), ticks: threadTicks() }));
  }
  if (m === 'measured') {
    // Spans still queued for export belong to the measured requests: export them inside the window.
    await tracing?.flush();
    const cpu = process.cpuUsage(mark.cpu);
    const main = threadCpu();
    const ticks = threadTicks();
    const mainUs = main && mark.main
      ? { runUs: (main.runNs - mark.main.runNs) / 1e3, waitUs: (main.waitNs - mark.main.waitNs) / 1e3, userTicks: ticks.userTicks - mark.ticks.userTicks, systemTicks: ticks.systemTicks - mark.ticks.systemTicks }
      : { runUs: null, waitUs: null };
    const measured = { cpuUs: cpu.user + cpu.system, served: served - mark.served, main: mainUs };
    if (countedWindow) dumpCountsHere();
    return process.send(measured);
  }
  if (m === 'flush') {
    await tracing?.flush();
    return process.send({ served, main: threadCpu() });
  }
  stopping = true;
  srv.close();
  srv.closeAllConnections();
  const spans = tracing ? await tracing.stop() : undefined;
  // TRACEPIPE_PROVIDERS, not TRACEPIPE_ENABLE: the startup session clears the latter when its file name has no {pid}.
  const session = process.env.TRACEPIPE_PROVIDERS ? await stopStartupSession() : undefined;
  process.send({ served, handled, spans, session });
  process.disconnect();
});
