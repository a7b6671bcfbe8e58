import { requireBuiltin, threadId } from '../schema/this-thread.js';
import type { Worker } from 'node:worker_threads';
import { threadOriginNs } from '../buffers/clock.js';
import { SessionMemory, SessionState } from '../buffers/session-memory.js';
import { ThreadBuffer } from '../buffers/thread-buffer.js';
import type { EnableContext, ProviderImpl } from '../schema/provider.js';
import { eventEnabledFor, providerRegistry } from '../schema/provider.js';
import type { RecordTarget } from '../schema/record-abi.js';
import type { SessionDescriptor } from './session-descriptor.js';
import { errorMessage } from '../schema/error-message.js';
import { onProcessExit } from './process-exit.js';
import { thisOsThreadId } from './thread-schedstat.js';
import { isServiceThread } from './service-thread.js';
import { loadNativeAddon } from './native-addon.js';
const diagnosticsChannel = requireBuiltin('node:diagnostics_channel') as typeof import('node:diagnostics_channel');

interface LiveSession {
  readonly desc: SessionDescriptor;
  readonly memory: SessionMemory;
  buffer: ThreadBuffer | undefined;
  /**
   * False while the session's drain is starting: events are written (they wait in the buffers), but no
   * provider is told of the session yet; a Block session's writer parks for that drain, within a bound
   * (ThreadBuffer.drainStarting).
   */
  running: boolean;
}

const origin = threadOriginNs();

/**
 * How this thread wakes a native drain (native/gc-hook/native_drain.cc), which Atomics.notify cannot
 * reach: through the addon, loaded on the thread's first such wake (a worker that never wakes one
 * never loads it). A wake is rare: a chunk taken or sealed while the drain sleeps, or the budget half
 * used.
 */
let nativeDrainAddon: { wakeSession(sab: SharedArrayBuffer): void } | null | undefined;
SessionMemory.wakeNative = (sab) => {
  nativeDrainAddon ??= loadNativeAddon<{ wakeSession(sab: SharedArrayBuffer): void }>('native_drain').addon ?? null;
  nativeDrainAddon?.wakeSession(sab);
};

/**
 * This thread's copy of "which sessions want what" (seed 000: the component keeps its own state and
 * the host tells it about changes). It owns this thread's buffer in each session and recomputes every
 * event's enabled flag and targets, only when sessions or providers change.
 */
class ThreadSessions {
  private readonly live = new Map<number, LiveSession>();
  /** Provider name → sessions whose onEnable has run for it, so every onEnable gets its onDisable. */
  private readonly notified = new Map<string, Map<number, EnableContext>>();

  constructor() {
    // A provider defined while sessions run is enabled at once, but its onEnable waits for a
    // microtask: it usually refers to the provider's own binding, which defineProvider has not returned yet.
    providerRegistry.onDefine((p) => {
      this.recomputeProvider(p, false);
      queueMicrotask(() => this.notify(p, [...p.enablements]));
    });
    // A built-in provider's callbacks arrive with its machinery, which may load after sessions enabled
    // it (asynchronously where Node cannot require() ES modules): they are told then, as a new provider's are.
    providerRegistry.onCallbacks((p) => queueMicrotask(() => this.notify(p, [...p.enablements])));
  }

  /**
   * This thread writes into the session from now on. `running` false: its drain is still starting, so
   * providers' onEnable wait for open() again once it runs (docs/BUFFERING.md, "Enable callbacks after
   * the drain runs").
   */
  open(desc: SessionDescriptor, running = true): void {
    const known = this.live.get(desc.id);
    if (known) {
      if (running && !known.running) this.markRunning(known);
      return;
    }
    const memory = SessionMemory.attach(desc.sab);
    if (memory.state >= SessionState.Stopping) return;
    // What the built-in providers it names do, for a session that runs already (one this thread joins):
    // loaded now, at once where Node can. The owner loads it while the session's drain starts (launch).
    // Not in tracepipe's own threads: every provider stays idle there, and their entries are bundles
    // (scripts/bundle-workers.mjs) beside which a machinery module loaded by URL would be a second copy.
    if (running && !isServiceThread) for (const c of desc.providers) providerRegistry.get(c.name)?.loadMachinery();
    this.live.set(desc.id, { desc, memory, buffer: undefined, running });
    this.recompute();
  }

  private markRunning(s: LiveSession): void {
    s.running = true;
    if (s.buffer) s.buffer.drainStarting = false;
    for (const p of providerRegistry.all()) if (p.enablements.some((e) => e.sessionId === s.desc.id)) this.notify(p, p.enablements);
  }

  /**
   * The session is going away: providers' onDisable run first, while their events still reach it, so
   * they can write rundown; such writes never park (they would wait on the stop that waits on them).
   */
  close(id: number): void {
    const s = this.live.get(id);
    if (!s) return;
    if (s.buffer) s.buffer.neverBlock = true;
    const enabled = [...providerRegistry.all()].filter((p) => p.enablements.some((e) => e.sessionId === id));
    // Without rundown, onDisable still runs (from recompute below), but after the session is untargeted.
    if (s.desc.rundown) {
      // Providers that hold events back go last, so they still record what the others' rundown causes (a GC).
      for (const p of [...enabled.filter((p) => !p.onFlush), ...enabled.filter((p) => p.onFlush)]) {
        const ctx = this.notified.get(p.name)?.get(id);
        if (!ctx) continue;
        this.notified.get(p.name)!.delete(id);
        safeCall(p, 'onDisable', ctx);
      }
    }
    this.flush(enabled);
    this.live.delete(id);
    if (s.buffer) {
      s.buffer.seal();
      s.buffer.publish();
    }
    this.recompute();
  }

  private bufferFor(s: LiveSession): ThreadBuffer | undefined {
    if (s.buffer && !s.buffer.detached) return s.buffer;
    if (s.buffer) return undefined;
    const claim = () => {
      const slot = s.memory.allocSlot(threadId(), Number(origin - BigInt(s.desc.originNs)), thisOsThreadId());
      if (slot < 0) process.emitWarning(`tracepipe: session ${s.desc.id} has no free thread slot; thread ${threadId()} will not be traced in it`);
      return slot;
    };
    s.buffer = new ThreadBuffer(
      s.memory,
      claim,
      () => {
        this.live.delete(s.desc.id);
        this.recompute();
      },
      () => this.sealChunks(),
    );
    s.buffer.drainStarting = !s.running;
    return s.buffer;
  }

  /** Providers write what they hold back (observed, not yet written): before a dump of a ring. */
  flushProviders(): void {
    this.flush([...providerRegistry.all()].filter((p) => p.enablements.length > 0));
  }

  /**
   * A thread that ends writes what its providers hold back, then hands its partly filled chunks to
   * the drain, or they would stay held, and says it writes no more (a stopping drain waits for that).
   */
  sealAll(): void {
    this.flushProviders();
    this.sealChunks();
    for (const s of this.live.values()) s.buffer?.publish();
  }

  /**
   * Runs `write`, a burst of events after which this thread expects to write nothing for a while (a
   * provider's periodic sample), and hands its chunks to the drains at once: no idle-seal timer wakes
   * the thread later for them, and no sleeping drain is woken for them (it takes them on its next
   * pass: a periodic sample is not worth a wake-up), unless its reader reads the stream live.
   */
  writeAndHandOver(write: () => void): void {
    ThreadBuffer.handingOver = true;
    try {
      write();
      for (const s of this.live.values()) s.buffer?.handOver();
    } finally {
      ThreadBuffer.handingOver = false;
    }
  }

  /** Hands this thread's chunk in every session to the drains (before it parks: it must hold none). */
  sealChunks(): void {
    for (const s of this.live.values()) s.buffer?.seal();
  }

  /**
   * A worker this thread created has exited, perhaps terminated in the middle of a write or while
   * parked, where its own exit handlers never ran: whatever it held in any session is given back.
   */
  reclaimThread(id: number): void {
    for (const s of this.live.values()) s.memory.reclaimThread(id);
  }

  private flush(providers: readonly ProviderImpl[]): void {
    for (const p of providers) if (p.onFlush) safeCall(p, 'onFlush');
  }

  recompute(): void {
    for (const p of providerRegistry.all()) this.recomputeProvider(p);
  }

  private recomputeProvider(p: ProviderImpl, notify = true): void {
    const wanting: { s: LiveSession; ctx: EnableContext }[] = [];
    for (const s of this.live.values()) {
      const cfg = s.desc.providers.find((c) => c.name === p.name);
      if (cfg) wanting.push({ s, ctx: { sessionId: s.desc.id, keywords: cfg.keywords, level: cfg.level, arguments: cfg.arguments } });
    }
    p.enablements = wanting.map((w) => w.ctx);
    // A provider whose members are not made yet has no event enabled: nothing to turn off.
    if (wanting.length > 0 || p.membersMade) for (const ev of p.events) {
      const targets: RecordTarget[] = [];
      for (const { s, ctx } of wanting) {
        if (!eventEnabledFor(ev, ctx) || (ev.replacedBy !== undefined && eventEnabledFor(ev.replacedBy, ctx))) continue;
        const b = this.bufferFor(s);
        if (b) targets.push(b);
      }
      ev.setTargets(targets);
    }
    if (notify) this.notify(p, wanting.map((w) => w.ctx));
  }

  /** Provider callbacks run after the targets are set, so an onEnable may write at once. */
  private notify(p: ProviderImpl, enabled: readonly EnableContext[]): void {
    if (!p.onEnable && !p.onDisable) return;
    const now = enabled.filter((c) => this.live.get(c.sessionId)?.running !== false);
    const done = this.notified.get(p.name) ?? new Map<number, EnableContext>();
    this.notified.set(p.name, done);
    for (const [id, ctx] of [...done]) {
      if (now.some((c) => c.sessionId === id)) continue;
      done.delete(id);
      safeCall(p, 'onDisable', ctx);
    }
    for (const ctx of now) {
      if (done.has(ctx.sessionId)) continue;
      done.set(ctx.sessionId, ctx);
      safeCall(p, 'onEnable', ctx);
    }
  }
}

function safeCall(p: ProviderImpl, which: 'onEnable' | 'onDisable' | 'onFlush', ctx?: EnableContext): void {
  try {
    if (which === 'onFlush') p.onFlush?.();
    else p[which]?.(ctx!);
  } catch (e) {
    process.emitWarning(`tracepipe: ${which} of provider '${p.name}' threw: ${errorMessage(e)}`);
  }
}

export const threadSessions = new ThreadSessions();
onProcessExit(() => threadSessions.sealAll());
// Node announces every Worker this thread creates; its 'exit' reaches this thread however it ends.
diagnosticsChannel.subscribe('worker_threads', (msg) => {
  const worker = (msg as { worker?: Worker }).worker;
  if (!worker || typeof worker.once !== 'function') return;
  const id = worker.threadId;
  worker.once('exit', () => threadSessions.reclaimThread(id));
});
