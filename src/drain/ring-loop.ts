import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { ChunkScanner } from '../buffers/chunk-scanner.js';
import { Ctl, type SessionMemory, SessionState } from '../buffers/session-memory.js';
import { addDropReasons, noDropReasons } from '../format/drop-reason.js';
import type { HeaderInfo } from '../format/stream-header.js';
import { errorMessage } from '../schema/error-message.js';
import type { DrainResult, DumpRequest, DumpResult, DumpTarget } from '../session/drain-protocol.js';
import { QUIET_WAIT_MS } from './drain-loop.js';
import { type DumpStep, RingDump, type RingDumpContext } from './ring-dump.js';
import type { Sink } from './sink.js';

/**
 * A ring session's drain: it writes nothing while the session runs (the ring keeps each thread's
 * newest events in place) and wakes only to make more of the budget resident, to serve dumps, or to
 * stop. A dump request arrives as a message, read synchronously here, so a dump can be served while
 * the owning thread is blocked (an uncaught exception waits for its dump in shared memory).
 *
 * Dumps are written a slice at a time: one to a file and one to a client at once, each line in the
 * order asked, taking turns. A dump a dying thread waits for goes first and is written whole. A
 * client that does not read holds up only its own dump (and those of clients behind it), each for at
 * most its deadline (ring-dump.ts); files never wait for clients.
 */
export function runRing(memory: SessionMemory, port: MessagePort, header: HeaderInfo, clockDeltaNs: number, sinkFor: (t: DumpTarget) => Sink): DrainResult {
  const ctx: RingDumpContext = { memory, header, clockDeltaNs, sinkFor };
  let bytesWritten = 0;
  const files: RingDump[] = [];
  const clients: RingDump[] = [];

  const report = (d: RingDump, error?: string): void => {
    const result: DumpResult = d.finish(error);
    bytesWritten += result.bytesWritten;
    const { id, reply } = d.request;
    if (reply) {
      // Queued on the owner's port before the owner wakes: it reads it at once, without its event loop.
      reply.postMessage(result);
      Atomics.store(memory.i32, Ctl.DumpsDone, id);
      Atomics.notify(memory.i32, Ctl.DumpsDone);
    }
    port.postMessage({ type: 'dumped', id, result });
  };
  /** One slice; 'done' when the dump is over (written, failed or abandoned, and reported). */
  const advance = (d: RingDump): DumpStep => {
    const why = d.overdue(performance.now());
    if (why !== undefined) {
      report(d, why);
      return 'done';
    }
    let step: DumpStep;
    try {
      step = d.step(ctx);
    } catch (e) {
      report(d, errorMessage(e));
      return 'done';
    }
    if (step === 'done') report(d);
    return step;
  };
  /** Writes a file dump to its end: files do not wait for anyone, so this is bounded by the disk. */
  const writeWhole = (d: RingDump): void => {
    while (advance(d) !== 'done');
  };
  const receive = (): void => {
    for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) {
      const req = m.message as DumpRequest;
      if (req?.type !== 'dump') continue;
      const d = new RingDump(req, performance.now());
      if (req.reply && !d.toClient) writeWhole(d);
      else (d.toClient ? clients : files).push(d);
    }
  };
  /** Clients waiting behind the one served whose deadline passed. */
  const expireWaiting = (): void => {
    const now = performance.now();
    for (let i = clients.length - 1; i >= 1; i--) {
      const why = clients[i]!.overdue(now);
      if (why !== undefined) report(clients.splice(i, 1)[0]!, why);
    }
  };

  for (;;) {
    const wake = Atomics.load(memory.i32, Ctl.DrainWake);
    receive();
    if (memory.state >= SessionState.Stopping) break;
    memory.prefault();
    expireWaiting();
    let busy = false;
    if (files.length > 0) {
      if (advance(files[0]!) === 'done') files.shift();
      busy = true;
    }
    if (clients.length > 0) {
      const step = advance(clients[0]!);
      if (step === 'done') clients.shift();
      busy ||= step !== 'blocked';
    }
    if (busy) continue;
    // Asleep until asked for something, or until a client's full socket is worth another try; the
    // bound only caps a lost wake-up.
    Atomics.wait(memory.i32, Ctl.DrainWake, wake, clients[0]?.retryMs ?? QUIET_WAIT_MS);
  }
  // The session stops: dumps to files asked for before are written, dumps to clients are given up.
  receive();
  for (const d of files) writeWhole(d);
  for (const d of clients) report(d, 'abandoned: the session stopped');
  if (memory.state !== SessionState.Failed) memory.setState(SessionState.Stopped);
  const producers = new ChunkScanner(memory).progress().map((p) => {
    const droppedByReason = noDropReasons();
    addDropReasons(droppedByReason, p.droppedByReason);
    return { threadId: p.threadId, dropped: p.dropped, droppedByReason, parks: 0, longestParkNs: 0 };
  });
  return { eventsWritten: 0, eventsDropped: 0, bytesWritten, producers };
}
