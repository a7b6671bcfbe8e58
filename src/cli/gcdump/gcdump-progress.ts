import type { HeapGraphBuilder } from '../../heap/heap-graph-builder.js';
import { formatBytes } from '../format-size.js';

const REFRESH_MS = 250;

/**
 * `gcdump collect`'s progress: on a terminal, one live line (phase, nodes and edges against V8's
 * counts, bytes, rate); otherwise a plain line when the phase changes.
 */
export class GcdumpProgress {
  bytes = 0;
  private readonly started = performance.now();
  private timer: NodeJS.Timeout | undefined;
  private lastPhase = 'waiting';

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly builder: HeapGraphBuilder,
  ) {}

  received(n: number): void {
    this.bytes += n;
  }

  /** After each piece of the stream: a pipe or a file hears of each new phase once. */
  update(): void {
    const b = this.builder;
    if (b.phase === this.lastPhase || this.timer || b.phase === 'done') return;
    this.lastPhase = b.phase;
    const line =
      b.phase === 'nodes'
        ? `V8 took the snapshot: receiving ${b.declaredNodes.toLocaleString('en-US')} nodes and ${b.declaredEdges.toLocaleString('en-US')} edges`
        : `receiving ${b.phase}`;
    this.out.write(`  ${line} (${(this.elapsedMs / 1000).toFixed(1)} s)\n`);
  }

  get elapsedMs(): number {
    return performance.now() - this.started;
  }

  line(): string {
    const b = this.builder;
    const s = this.elapsedMs / 1000;
    if (b.phase === 'waiting') return `${s.toFixed(1)} s  V8 is taking the snapshot (the target is paused)`;
    const of = (n: number, total: number): string => `${n.toLocaleString('en-US')}/${total.toLocaleString('en-US')}`;
    return `${s.toFixed(1)} s  ${b.phase}  nodes ${of(b.nodeCount, b.declaredNodes)}  edges ${of(b.edgeCount, b.declaredEdges)}  ${formatBytes(this.bytes)}  ${formatBytes(Math.round(this.bytes / Math.max(s, 0.001)))}/s`;
  }

  start(): void {
    if (this.out.isTTY !== true) return;
    this.timer = setInterval(() => this.out.write(`\r\x1b[K${this.line()}`), REFRESH_MS);
  }

  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.out.write('\r\x1b[K');
  }
}
