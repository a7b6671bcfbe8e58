import type { Session } from 'node:inspector';

/** A main-thread GC pause as V8's trace events describe it. */
export interface TracedPause {
  /** Process monotonic clock (the scale of process.hrtime), ns. */
  readonly startNs: number;
  readonly durationNs: number;
  readonly kind: string;
  readonly heapUsedAfter: number;
}

interface TraceEvent {
  readonly name: string;
  readonly ph: string;
  readonly tid: number;
  /** µs on the process monotonic clock. */
  readonly ts: number;
  readonly args?: { usedHeapSizeAfter?: number };
}

const KINDS: Readonly<Record<string, string>> = { MinorGC: 'scavenge', MajorGC: 'mark-compact' };
const TRACE_CONFIG = { traceConfig: { includedCategories: ['v8'] } };
const COMPLETE_TIMEOUT_MS = 1000;

/**
 * Watches the main thread's collections from the watchdog while the main thread is blocked. perf_hooks
 * cannot: it hands pauses to JavaScript on the blocked loop. V8's trace events can: Node's tracing agent
 * collects them on its own thread, and an inspector session connected to the main thread starts and
 * stops it without that thread's help. Tracing runs only during a stall (category 'v8' is not free),
 * in slices: each stop hands over what the slice saw.
 */
export class StallGcTracer {
  private session: Session | undefined;
  /** Connected and warmed up: start() works without the main thread's help from now on. */
  private ready = false;
  private failed = false;
  private open = new Map<string, number>();
  private collected: TracedPause[] = [];
  private complete: (() => void) | undefined;
  /** Main thread's id in trace events: on Linux the main thread's kernel id is the pid. */
  private readonly mainTid = process.pid;
  active = false;

  static get supported(): boolean {
    return process.platform === 'linux';
  }

  /**
   * Connects to the main thread's inspector ahead of any stall: the connection and the agent's first
   * start are made on the main thread's loop, while starting and stopping it later is not.
   */
  async connect(): Promise<void> {
    if (this.session || this.failed) return;
    try {
      const { Session } = await import('node:inspector');
      const s = new Session();
      s.connectToMainThread();
      s.on('NodeTracing.dataCollected', (m: { params: { value: TraceEvent[] } }) => this.take(m.params.value));
      s.on('NodeTracing.tracingComplete', () => this.complete?.());
      this.session = s;
      // The agent's first start needs the main thread's loop; later ones do not. Do it now, while it turns.
      await this.post('NodeTracing.start', TRACE_CONFIG);
      await this.post('NodeTracing.stop');
      this.open.clear();
      this.collected = [];
      this.ready = true;
    } catch (e) {
      this.fail(e as Error);
    }
  }

  private fail(e: Error): void {
    this.failed = true;
    process.emitWarning(`tracepipe: cannot trace GC pauses during stalls (${e.message}); they arrive when the loop turns`);
  }

  private post(method: string, params: object = {}): Promise<void> {
    return new Promise((resolve, reject) => {
      // A pending inspector call does not hold this thread's loop open; this timer does.
      const hold = setInterval(() => {}, 1000);
      this.session!.post(method, params, (e) => {
        clearInterval(hold);
        if (e) reject(e);
        else resolve();
      });
    });
  }

  private take(events: readonly TraceEvent[]): void {
    for (const e of events) {
      const kind = KINDS[e.name];
      if (!kind || e.tid !== this.mainTid) continue;
      if (e.ph === 'B') this.open.set(e.name, e.ts);
      else if (e.ph === 'E') {
        const b = this.open.get(e.name);
        if (b === undefined) continue;
        this.open.delete(e.name);
        this.collected.push({ startNs: b * 1000, durationNs: (e.ts - b) * 1000, kind, heapUsedAfter: e.args?.usedHeapSizeAfter ?? NaN });
      }
    }
  }

  /** Starts a slice; false if tracing is unavailable here (reported once) or not ready yet. */
  async start(): Promise<boolean> {
    if (!this.ready) return false;
    try {
      await this.post('NodeTracing.start', TRACE_CONFIG);
      this.active = true;
      return true;
    } catch (e) {
      this.ready = false;
      this.fail(e as Error);
      return false;
    }
  }

  /** Ends the slice and returns the complete pauses it saw, in order. */
  async stop(): Promise<TracedPause[]> {
    if (!this.active) return [];
    this.active = false;
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, COMPLETE_TIMEOUT_MS);
      this.complete = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    try {
      await this.post('NodeTracing.stop');
      await done;
    } catch {
      // A failed stop loses this slice's pauses to the watchdog only: the main thread writes them.
    }
    // A pause still open at the slice's end has no end event: the main thread will write it.
    this.open.clear();
    const out = this.collected;
    this.collected = [];
    return out;
  }

  close(): void {
    this.session?.disconnect();
    this.session = undefined;
  }
}
