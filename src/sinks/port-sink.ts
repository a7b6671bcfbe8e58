import type { MessagePort } from 'node:worker_threads';
import { Ctl, type SessionMemory } from '../buffers/session-memory.js';
import type { Sink } from '../drain/sink.js';
import type { DataMessage } from '../session/drain-protocol.js';

/**
 * Hands encoded bytes to the session's owning thread, which writes them to a user stream or decodes
 * them for a listener. The owner subtracts what it consumed from InflightBytes; the drain holds off
 * while too much is in flight, so a slow consumer costs drops (or parking), never unbounded memory.
 */
export class PortSink implements Sink {
  readonly live = true;

  constructor(
    private readonly port: MessagePort,
    private readonly memory: SessionMemory,
  ) {}

  write(view: Uint8Array): void {
    // The view belongs to the drain's reusable buffer: send a copy the receiver can own.
    const bytes = view.slice();
    Atomics.add(this.memory.i32, Ctl.InflightBytes, bytes.length);
    const msg: DataMessage = { type: 'data', bytes };
    this.port.postMessage(msg, [bytes.buffer as ArrayBuffer]);
  }

  get congested(): boolean {
    return this.memory.outputCongested;
  }

  close(): void {}
}
