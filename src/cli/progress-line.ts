import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { basename } from 'node:path';
import { traceReadChannel, type TraceReadProgress } from '../format/trace-read-channel.js';
import { formatBytes } from './format-size.js';
import { formatRate } from './format-count.js';
import { printable } from './printable.js';

const REFRESH_MS = 250;

export interface ProgressState {
  /** What is going on, when it changes: 'converting', 'computing dominators'. */
  readonly doing?: string;
  readonly events?: number;
  readonly bytes?: number;
  /** The bytes the current stage will have read at its end, when known: the line then estimates the rest. */
  readonly totalBytes?: number;
  /** What else the job counts, said last: '0 dropped'. */
  readonly note?: string;
}

export interface ProgressOptions {
  /** `--quiet`, or a reason of the command's own to show nothing (dump's output on the same terminal). */
  readonly quiet?: boolean;
  readonly out?: NodeJS.WriteStream;
}

/**
 * The one progress line of every long job: what is going on, events and bytes done, the rate and,
 * when the size is known, an estimate of the rest; rewritten in place on stderr, drawn at once,
 * then at most every 250 ms (also from synchronous work, which a timer could not
 * interrupt), and cleared at the end. Nothing at all when stderr is not a terminal or with --quiet:
 * logs and pipes get only the result.
 */
export class ProgressLine {
  private readonly out: NodeJS.WriteStream;
  /** Off from the start (no terminal, --quiet), or once stopped. */
  private shown: boolean;
  private doing: string;
  private events: number | undefined;
  private bytes: number | undefined;
  private totalBytes: number | undefined;
  private note: string | undefined;
  /** Passes over each trace file seen through the read channel (a report makes several over one, query one over each). */
  private readonly passes = new Map<string, number>();
  /** Which pass, over which file, the line is about, when that is not obvious. */
  private pass = '';
  private stageStarted = performance.now();
  private lastDraw = -Infinity;
  private drawn = false;
  private timer: NodeJS.Timeout | undefined;
  private following: ((message: unknown) => void) | undefined;

  constructor(doing: string, options: ProgressOptions = {}) {
    this.out = options.out ?? process.stderr;
    this.doing = doing;
    this.shown = this.out.isTTY === true && options.quiet !== true;
    // The timer keeps the elapsed time and rate moving while the job waits; it never holds the process.
    if (!this.shown) return;
    this.timer = setInterval(() => this.draw(), REFRESH_MS).unref();
    this.draw();
  }

  /** New counts (each replaces the last); a change of `doing` starts a new stage, drawn at once. */
  update(p: ProgressState): void {
    if (!this.shown) return;
    const newStage = p.doing !== undefined && p.doing !== this.doing;
    if (newStage) this.startStage(p.doing!);
    if (p.events !== undefined) this.events = p.events;
    if (p.bytes !== undefined) this.bytes = p.bytes;
    if (p.totalBytes !== undefined) this.totalBytes = p.totalBytes;
    if (p.note !== undefined) this.note = p.note;
    if (newStage || performance.now() - this.lastDraw >= REFRESH_MS) this.draw();
  }

  /** Shows every pass over a trace file this process makes until stop(), whichever code makes it. */
  followTraceReads(): this {
    if (!this.shown || this.following) return this;
    this.following = (message) => {
      const m = message as TraceReadProgress;
      if (m.bytesRead === 0) {
        const n = (this.passes.get(m.path) ?? 0) + 1;
        this.passes.set(m.path, n);
        this.pass = [this.passes.size > 1 ? basename(m.path) : '', n > 1 ? `pass ${n}` : ''].filter(Boolean).join(', ');
        this.events = undefined;
        this.stageStarted = performance.now();
        this.lastDraw = -Infinity;
      }
      this.update({ bytes: m.bytesRead, totalBytes: m.size });
    };
    subscribe(traceReadChannel.name, this.following);
    return this;
  }

  /** Stops drawing and clears the line. */
  stop(): void {
    this.shown = false;
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.following) unsubscribe(traceReadChannel.name, this.following);
    this.following = undefined;
    if (this.drawn) this.out.write('\r\x1b[K');
    this.drawn = false;
  }

  private startStage(doing: string): void {
    this.doing = doing;
    this.events = this.bytes = this.totalBytes = undefined;
    this.note = undefined;
    this.stageStarted = performance.now();
  }

  private line(): string {
    const s = Math.max((performance.now() - this.stageStarted) / 1000, 0.001);
    const parts: string[] = [];
    if (this.events !== undefined) parts.push(`${this.events.toLocaleString('en-US')} events`);
    if (this.bytes !== undefined) {
      const total = this.totalBytes;
      parts.push(total ? `${formatBytes(this.bytes)} of ${formatBytes(total)} (${Math.floor((100 * this.bytes) / total)}%)` : `${formatBytes(this.bytes)} read`);
    }
    if (this.events) parts.push(formatRate(this.events / s, 'events/s'));
    else if (this.bytes) parts.push(formatRate(this.bytes / s, 'B/s'));
    if (this.bytes && this.totalBytes && this.bytes < this.totalBytes) parts.push(`~${Math.ceil(((this.totalBytes - this.bytes) * s) / this.bytes)} s left`);
    // Before anything is counted, the time it has been going says that it is alive.
    if (!this.events && !this.bytes) parts.unshift(`${s.toFixed(1)} s`);
    if (this.note) parts.push(this.note);
    const pass = this.pass ? ` (${this.pass})` : '';
    return `${this.doing}${pass}: ${parts.join(', ')}`;
  }

  private draw(): void {
    if (!this.shown) return;
    this.lastDraw = performance.now();
    this.drawn = true;
    // Wider than the terminal, the line would wrap and \r could not rewrite it.
    const width = this.out.columns > 1 ? this.out.columns - 1 : 200;
    // File names come from anybody: escaped like every name the CLI shows.
    this.out.write(`\r\x1b[K${printable(this.line()).slice(0, width)}`);
  }
}
