/**
 * A Drop-mode session written to a file or to a descriptor (a client's socket: `collect --pid`,
 * `counters`), drained by a native thread of the addon (native/gc-hook/native_drain.cc) instead of a
 * worker: the stream is the same, and the process is spared an isolate (~10 MB, and tens of ms of CPU
 * to boot it and compile the drain). Block mode, rings, OTLP exports and outputs consumed on this
 * thread (a stream, a listener) keep the worker: a native thread cannot wake what waits in
 * Atomics.wait (a parked producer, a dump's waiter) and runs no JavaScript. BENCHMARKS.md §37
 * measures both drains.
 */
import type { EventEmitter as EventEmitterType } from 'node:events';
import { BufferingMode, Ctl, SessionMemory } from '../buffers/session-memory.js';
import { addDropReasons, noDropReasons } from '../format/drop-reason.js';
import type { DrainHandle, DrainSettings } from '../session/drain-thread.js';
import type { DrainMessage, DrainResult } from '../session/drain-protocol.js';
import { loadNativeAddon } from '../session/native-addon.js';
import { errorMessage } from '../schema/error-message.js';
import { requireBuiltin } from '../schema/this-thread.js';
import { createNewFileSync, openPrivateFileSync } from './private-file.js';

const { EventEmitter } = requireBuiltin('node:events') as typeof import('node:events');
const { closeSync, statSync } = requireBuiltin('node:fs') as typeof import('node:fs');

/** The result as the addon reports it: drops by reason as counts in reason-code order. */
interface NativeResult extends Omit<DrainResult, 'producers'> {
  readonly producers: readonly { threadId: number; dropped: number; droppedByReason: number[]; parks: number; longestParkNs: number }[];
}

export interface NativeDrainAddon {
  /**
   * Writes the prologue and the header (the JSON document, framed) first, and throws when they cannot
   * be written; -1 when a socket takes none of them now.
   */
  start(sab: SharedArrayBuffer, fd: number, live: boolean, originNs: bigint, header: Uint8Array, prologue: Uint8Array | undefined, onDone: (result: NativeResult) => void): number;
  abandon(id: number): void;
  join(id: number, timeoutMs: number): boolean;
  ref(id: number, on: boolean): void;
  layout(): Record<string, number>;
}

/** Loaded by the first session it may serve: after that session's thread can write (loading it takes ~2 ms). */
let addon: NativeDrainAddon | null | undefined;

class NativeDrain extends (EventEmitter as typeof EventEmitterType) implements DrainHandle {
  private id = -1;

  /**
   * Starts draining into `fd` once the addon has written its first bytes (a client's prologue, the
   * stream's header) on this thread: an output that takes nothing fails the start, as a worker
   * drain's does. A file's descriptor is the drain's from then on; a live one stays its opener's. Says
   * 'running' once its owner listens.
   */
  start(native: NativeDrainAddon, settings: DrainSettings, fd: number, live: boolean): this | undefined {
    const i32 = new Int32Array(settings.sab);
    // A live reader waits for periodic samples: their hand-over wakes the drain (SessionMemory.liveReader).
    if (live) Atomics.store(i32, Ctl.LiveReader, 1);
    // From now on producers wake this drain through the addon (SessionMemory.wakeDrain).
    Atomics.store(i32, Ctl.NativeDrain, 1);
    const header = new TextEncoder().encode(JSON.stringify(settings.header));
    const prologue = settings.sink.kind === 'fd' ? settings.sink.prologue : undefined;
    this.id = native.start(settings.sab, fd, live, BigInt(settings.originNs), header, prologue, (r) => this.finish(r));
    if (this.id < 0) {
      // A socket that took none of the first bytes: a worker drain waits for its reader, off this thread.
      Atomics.store(i32, Ctl.NativeDrain, 0);
      return undefined;
    }
    this.tell({ type: 'running' });
    return this;
  }

  /** A drain that could not start (its file would not open): says why, as a worker's would. */
  failed(error: string): this {
    this.tell({ type: 'failed', error });
    process.nextTick(() => this.emit('exit', 1));
    return this;
  }

  private tell(msg: DrainMessage): void {
    // The owner listens once drainThread has returned.
    process.nextTick(() => this.emit('message', msg));
  }

  private finish(r: NativeResult): void {
    const producers = r.producers.map((p) => {
      const droppedByReason = noDropReasons();
      addDropReasons(droppedByReason, p.droppedByReason);
      return { ...p, droppedByReason };
    });
    this.emit('message', { type: 'done', result: { ...r, producers } });
    this.emit('exit', 0);
  }

  ref(): void {
    if (this.id >= 0) addon!.ref(this.id, true);
  }

  unref(): void {
    if (this.id >= 0) addon!.ref(this.id, false);
  }

  /** The owner gave the drain up (its stop timed out): it writes nothing more, and closes a file it owns. */
  terminate(): void {
    if (this.id >= 0) addon!.abandon(this.id);
  }

  postMessage(): void {
    throw new Error('tracepipe: a native drain takes no requests (only a ring is dumped)');
  }

  awaitStopped(deadline: number): void {
    if (this.id >= 0) addon!.join(this.id, Math.max(0, deadline - Date.now()));
  }
}

/**
 * Whether `path` names what the native drain may open on the owner's thread: nothing yet, a regular
 * file or a device. A FIFO's open waits for its reader (up to 10 s, private-file.ts), which only a
 * drain thread of its own may do; so do other kinds, to be safe.
 */
function opensAtOnce(path: string): boolean {
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    return st === undefined || st.isFile() || st.isCharacterDevice();
  } catch {
    return true; // The open says why it cannot be written (a directory in the way, no permission).
  }
}

/** The native drain for a session it serves: Drop mode, no OTLP export, a file (see opensAtOnce) or an fd. */
export function startNativeDrain(settings: DrainSettings): DrainHandle | undefined {
  const { sink } = settings;
  if (settings.otlp || (sink.kind !== 'fd' && sink.kind !== 'file') || SessionMemory.attach(settings.sab).mode !== BufferingMode.Drop) return undefined;
  addon ??= loadNativeAddon<NativeDrainAddon>('native_drain').addon ?? null;
  if (!addon) return undefined;
  if (sink.kind === 'fd') {
    try {
      return new NativeDrain().start(addon, settings, sink.fd, true);
    } catch (e) {
      return new NativeDrain().failed(errorMessage(e));
    }
  }
  if (sink.kind !== 'file' || !opensAtOnce(sink.path)) return undefined;
  let fd: number;
  try {
    fd = sink.newFile ? createNewFileSync(sink.path) : openPrivateFileSync(sink.path);
  } catch (e) {
    return new NativeDrain().failed(errorMessage(e));
  }
  try {
    const drain = new NativeDrain().start(addon, settings, fd, false);
    // A device that takes nothing now (opened non-blocking by someone else): a worker opens it again.
    if (!drain) closeSync(fd);
    return drain;
  } catch (e) {
    closeSync(fd);
    return new NativeDrain().failed(errorMessage(e));
  }
}

