import { TraceParser } from '../format/trace-parser.js';
import { formatBytes } from './format-size.js';

const TTY_REFRESH_MS = 250;
const LINE_EVERY_MS = 1000;

/**
 * Counts a trace stream as it goes by (events, bytes, drops as the sequence points report them) and
 * shows it: one line rewritten in place on a terminal, a plain line per second otherwise.
 */
export class CollectProgress {
  events = 0;
  bytes = 0;
  dropped = 0;
  private readonly parser: TraceParser;
  private parseError: string | undefined;
  private readonly started = performance.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly out: NodeJS.WriteStream) {
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
  }

  get elapsedMs(): number {
    return performance.now() - this.started;
  }

  line(): string {
    const drops = this.dropped > 0 ? `, ${this.dropped.toLocaleString('en-US')} dropped` : ', 0 dropped';
    return `${(this.elapsedMs / 1000).toFixed(1)} s  ${this.events.toLocaleString('en-US')} events  ${formatBytes(this.bytes)}${drops}`;
  }

  start(): void {
    const tty = this.out.isTTY === true;
    this.timer = setInterval(() => this.out.write(tty ? `\r\x1b[K${this.line()}` : `${this.line()}\n`), tty ? TTY_REFRESH_MS : LINE_EVERY_MS);
  }

  /** Stops the display (and clears the in-place line on a terminal). */
  stop(): void {
    clearInterval(this.timer);
    if (this.out.isTTY) this.out.write('\r\x1b[K');
  }
}
