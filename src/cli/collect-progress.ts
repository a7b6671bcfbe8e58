import { TraceParser } from '../format/trace-parser.js';
import { formatBytes } from './format-size.js';
import { ProgressLine } from './progress-line.js';

const LINE_EVERY_MS = 1000;

/**
 * Counts a trace stream as it goes by (events, bytes, drops as the sequence points report them) and
 * shows it: on a terminal, on the progress line every long job shows; otherwise, since a capture
 * has no end to wait for, a plain line per second for the log. Nothing with `--quiet`.
 */
export class CollectProgress {
  events = 0;
  bytes = 0;
  dropped = 0;
  private readonly parser: TraceParser;
  private parseError: string | undefined;
  private readonly started = performance.now();
  private readonly tty: boolean;
  private live: ProgressLine | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly quiet = false,
  ) {
    this.tty = out.isTTY === true;
    this.parser = new TraceParser(
      {
        event: () => this.events++,
        sequencePoint: (sp) => (this.dropped = sp.dropped()),
        end: (totals) => {
          this.events = totals.events;
          this.dropped = totals.dropped;
        },
      },
      false,
    );
  }

  push(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    if (this.parseError) return;
    try {
      this.parser.push(chunk);
    } catch (e) {
      // The file gets every byte regardless; the final summary reports the damage.
      this.parseError = (e as Error).message;
    }
    this.live?.update({ events: this.events, bytes: this.bytes, note: `${this.dropped.toLocaleString('en-US')} dropped` });
  }

  get elapsedMs(): number {
    return performance.now() - this.started;
  }

  line(): string {
    const drops = this.dropped > 0 ? `, ${this.dropped.toLocaleString('en-US')} dropped` : ', 0 dropped';
    return `${(this.elapsedMs / 1000).toFixed(1)} s  ${this.events.toLocaleString('en-US')} events  ${formatBytes(this.bytes)}${drops}`;
  }

  start(): void {
    if (this.quiet) return;
    if (this.tty) this.live = new ProgressLine('collecting', { out: this.out });
    else this.timer = setInterval(() => this.out.write(`${this.line()}\n`), LINE_EVERY_MS);
  }

  /** Stops the display (and clears the line on a terminal). */
  stop(): void {
    clearInterval(this.timer);
    this.live?.stop();
  }
}
