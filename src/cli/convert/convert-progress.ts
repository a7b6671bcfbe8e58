import type { ConvertProgress } from '../../export/convert-trace.js';
import { formatBytes } from '../format-size.js';

const REFRESH_MS = 250;

/** Events, input read and rate, rewritten in place on a terminal; nothing when stderr is not one. */
export class ConvertProgressLine {
  private last: ConvertProgress = { events: 0, bytesIn: 0 };
  private readonly started = performance.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly out: NodeJS.WriteStream,
    /** What the line says is going on (`tracepipe query` loads). */
    private readonly doing = 'converting',
  ) {
    if (out.isTTY) this.timer = setInterval(() => out.write(`\r\x1b[K${this.line()}`), REFRESH_MS);
  }

  update(p: ConvertProgress): void {
    this.last = p;
  }

  private line(): string {
    const s = (performance.now() - this.started) / 1000;
    return `${this.doing}: ${this.last.events.toLocaleString('en-US')} events, ${formatBytes(this.last.bytesIn)} read, ${(this.last.events / s / 1e6).toFixed(2)} M events/s`;
  }

  stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.out.write('\r\x1b[K');
  }
}
