import type { HeapGraphBuilder } from '../../heap/heap-graph-builder.js';
import { formatBytes } from '../format-size.js';

const REFRESH_MS = 250;

/** `gcdump collect`'s live line on a terminal: phase, nodes and edges against V8's counts, bytes, rate. */
export class GcdumpProgress {
  bytes = 0;
  private readonly started = performance.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly builder: HeapGraphBuilder,
  ) {}

  received(n: number): void {
    this.bytes += n;
  }

  get elapsedMs(): number {
    return performance.now() - this.started;
  }

  line(): string {
    const b = this.builder;
    const s = this.elapsedMs / 1000;
    const phase = b.phase === 'waiting' ? 'V8 is taking the snapshot' : b.phase;
    const of = (n: number, total: number): string => `${n.toLocaleString('en-US')}/${total.toLocaleString('en-US')}`;
    return `${s.toFixed(1)} s  ${phase}  nodes ${of(b.nodeCount, b.declaredNodes)}  edges ${of(b.edgeCount, b.declaredEdges)}  ${formatBytes(this.bytes)}  ${formatBytes(this.bytes / Math.max(s, 0.001))}/s`;
  }

  /** Only on a terminal: a pipe or a file gets the final summary alone. */
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
