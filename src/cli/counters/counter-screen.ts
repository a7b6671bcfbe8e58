import type { WriteStream } from 'node:tty';
import type { BoardRow } from './counter-board.js';
import { unitLabel, valueText } from './counter-text.js';
import { printable } from '../printable.js';

const ESC = '\x1b[';

/** What one frame shows. */
export interface Frame {
  readonly title: string;
  readonly status: string;
  /** A warning line (a stall, figures that stopped coming), or ''. */
  readonly alert: string;
  readonly rows: readonly BoardRow[];
  /** Rows whose value changed in the latest interval are drawn bold. */
  readonly changedSinceNs: number;
}

/**
 * The monitor's screen on a terminal: the alternate screen, redrawn in place from the top-left
 * corner, each line cleared to its end and cut to the window's width, never more lines than the
 * window has (so it never scrolls); resizing redraws.
 */
export class CounterScreen {
  private last: Frame | undefined;
  private readonly onResize = (): void => {
    if (this.last) this.draw(this.last);
  };

  constructor(private readonly out: WriteStream) {}

  open(): void {
    this.out.write(`${ESC}?1049h${ESC}?25l${ESC}2J`);
    this.out.on('resize', this.onResize);
  }

  close(): void {
    this.out.off('resize', this.onResize);
    this.out.write(`${ESC}?25h${ESC}?1049l`);
  }

  draw(f: Frame): void {
    this.last = f;
    const width = Math.max(20, this.out.columns || 80);
    const height = Math.max(4, this.out.rows || 24);
    const nameW = Math.max(8, ...f.rows.map((r) => r.name.length));
    const unitW = Math.max(4, ...f.rows.map((r) => unitLabel(r).length));
    const valueW = Math.max(10, ...f.rows.map((r) => valueText(r).length));
    const lines: { text: string; bold?: boolean; inverse?: boolean }[] = [{ text: f.title, inverse: true }, { text: f.status }, { text: f.alert, bold: true }];
    let provider = '';
    for (const r of f.rows) {
      if (r.provider !== provider) {
        provider = r.provider;
        lines.push({ text: '' }, { text: `[${provider}]`, bold: true });
      }
      lines.push({ text: `    ${r.name.padEnd(nameW)}  ${unitLabel(r).padEnd(unitW)}  ${valueText(r).padStart(valueW)}`, bold: r.changedNs >= f.changedSinceNs });
    }
    if (lines.length > height) {
      const hidden = lines.length - height + 1;
      lines.length = height - 1;
      lines.push({ text: `… ${hidden} more lines: enlarge the window` });
    }
    const body = lines.map((l) => {
      const text = printable(l.text).slice(0, width);
      const style = l.inverse ? `${ESC}7m` : l.bold ? `${ESC}1m` : '';
      return `${style}${text}${style ? `${ESC}0m` : ''}${ESC}K`;
    });
    this.out.write(`${ESC}H${body.join('\r\n')}${ESC}J`);
  }
}
