import type { HeapGraphBuilder } from '../../heap/heap-graph-builder.js';
import { ProgressLine } from '../progress-line.js';

const phaseText = (phase: string): string => (phase === 'waiting' ? 'V8 is taking the snapshot (the target is paused)' : `receiving ${phase}`);

/**
 * `gcdump collect`'s progress: on a terminal, the progress line every long job shows (phase, nodes
 * and edges against V8's counts, bytes, rate); otherwise a plain line when the phase changes. Nothing
 * with `--quiet`.
 */
export class GcdumpProgress {
  bytes = 0;
  private readonly started = performance.now();
  private live: ProgressLine | undefined;
  private lastPhase = 'waiting';
  private livePhase = 'waiting';
  private phaseStartBytes = 0;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly builder: HeapGraphBuilder,
    private readonly quiet = false,
  ) {}

  received(n: number): void {
    this.bytes += n;
  }

  /** After each piece of the stream: the line is redrawn on a terminal; a pipe or a file hears of each new phase once. */
  update(): void {
    const b = this.builder;
    if (this.live) {
      // A phase is a stage of the line, drawn at once; its bytes and rate count from its start.
      if (b.phase !== this.livePhase) [this.livePhase, this.phaseStartBytes] = [b.phase, this.bytes];
      const of = (n: number, total: number): string => `${n.toLocaleString('en-US')}/${total.toLocaleString('en-US')}`;
      this.live.update({ doing: phaseText(b.phase), bytes: this.bytes - this.phaseStartBytes, note: `nodes ${of(b.nodeCount, b.declaredNodes)}, edges ${of(b.edgeCount, b.declaredEdges)}` });
      return;
    }
    if (this.quiet || b.phase === this.lastPhase || b.phase === 'done') return;
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

  start(): void {
    if (this.out.isTTY !== true || this.quiet) return;
    this.live = new ProgressLine(phaseText('waiting'), { out: this.out });
  }

  stop(): void {
    this.live?.stop();
  }
}
