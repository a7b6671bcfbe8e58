import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { ChunkScanner } from '../buffers/chunk-scanner.js';
import { Ctl, type SessionMemory, SessionState } from '../buffers/session-memory.js';
import { addDropReasons, noDropReasons } from '../format/drop-reason.js';
import type { HeaderInfo } from '../format/stream-header.js';
import type { DrainResult, DumpRequest, DumpResult, DumpTarget } from '../session/drain-protocol.js';
import { DrainLoop, QUIET_WAIT_MS } from './drain-loop.js';
import type { Sink } from './sink.js';

/**
 * A ring session's drain: it writes nothing while the session runs (the ring keeps each thread's
 * newest events in place) and wakes only to make more of the budget resident, to serve a dump, or to
 * stop. A dump request arrives as a message, read synchronously here, so a dump can be served while
 * the owning thread is blocked (an uncaught exception waits for its dump in shared memory).
 */
export function runRing(memory: SessionMemory, port: MessagePort, header: HeaderInfo, clockDeltaNs: number, sinkFor: (t: DumpTarget) => Sink): DrainResult {
  let bytesWritten = 0;
  const serve = (req: DumpRequest): void => {
    let result: DumpResult;
    try {
      result = new DrainLoop(memory, sinkFor(req.target), header, clockDeltaNs).dump();
    } catch (e) {
      result = { eventsWritten: 0, eventsDropped: 0, bytesWritten: 0, error: (e as Error).message };
    }
    bytesWritten += result.bytesWritten;
    port.postMessage({ type: 'dumped', id: req.id, result });
    Atomics.store(memory.i32, Ctl.DumpsDone, req.id);
    Atomics.notify(memory.i32, Ctl.DumpsDone);
  };
  const serveAll = (): void => {
    for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) {
      const req = m.message as DumpRequest;
      if (req?.type === 'dump') serve(req);
    }
  };
  for (;;) {
    const wake = Atomics.load(memory.i32, Ctl.DrainWake);
    serveAll();
    if (memory.state >= SessionState.Stopping) break;
    memory.prefault();
    // Asleep until asked for something; the bound only caps a lost wake-up.
    Atomics.wait(memory.i32, Ctl.DrainWake, wake, QUIET_WAIT_MS);
  }
  serveAll();
  if (memory.state !== SessionState.Failed) memory.setState(SessionState.Stopped);
  const producers = new ChunkScanner(memory).progress().map((p) => {
    const droppedByReason = noDropReasons();
    addDropReasons(droppedByReason, p.droppedByReason);
    return { threadId: p.threadId, dropped: p.dropped, droppedByReason, parks: 0, longestParkNs: 0 };
  });
  return { eventsWritten: 0, eventsDropped: 0, bytesWritten, producers };
}
