import type { MessagePort } from 'node:worker_threads';
import { Ctl, type SessionMemory } from '../buffers/session-memory.js';
import type { Sink } from '../drain/sink.js';

export interface DataMessage {
  readonly type: 'data';
  readonly bytes: Uint8Array;
}

/**
 * Hands encoded bytes to the session's owning thread, which writes them to a user stream or decodes
 * them for a listener. The owner subtracts what it consumed from InflightBytes; the drain holds off
 * while too much is in flight, so a slow consumer costs drops (or parking), never unbounded memory.
 */
export class PortSink implements Sink {
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
    const i = this.memory.i32;
    return Atomics.load(i, Ctl.Paused) !== 0 || Atomics.load(i, Ctl.InflightBytes) > MAX_INFLIGHT_BYTES;
  }

  close(): void {}
}

/** Consumer side: acknowledges bytes so the drain may send more. */
export function acknowledge(memory: SessionMemory, n: number): void {
  Atomics.sub(memory.i32, Ctl.InflightBytes, n);
  memory.wakeDrain();
}

export const MAX_INFLIGHT_BYTES = 8 << 20;
