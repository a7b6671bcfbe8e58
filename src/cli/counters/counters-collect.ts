import { openPrivateFile } from '../../sinks/private-file.js';
import { CliError } from '../cli-error.js';
import { writeErr } from '../output.js';
import { type BoardInterval, CounterBoard } from './counter-board.js';
import type { CounterSession } from './counter-session.js';
import { wallClock } from './counter-text.js';

export type CollectFormat = 'csv' | 'json';

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

function rowsText(i: BoardInterval, at: Date, format: CollectFormat): string {
  const time = at.toISOString();
  if (format === 'json') return i.rows.map((r) => `${JSON.stringify({ time, provider: r.provider, name: r.name, value: r.value, unit: r.unit })}\n`).join('');
  return i.rows.map((r) => `${time},${csvField(r.provider)},${csvField(r.name)},${r.value},${csvField(r.unit)}\n`).join('');
}

/**
 * `tracepipe counters collect`: one row per counter per interval into `file`, until `durationMs`,
 * Ctrl-C, or the end of the session (the target exiting). Each interval's rows are written whole,
 * so the file is complete however it ends.
 */
export async function collect(session: CounterSession, shown: ReadonlySet<string>, format: CollectFormat, file: string, durationMs: number | undefined): Promise<number> {
  const fh = await openPrivateFile(file).catch((e: Error) => {
    throw new CliError(`cannot write ${file}: ${e.message}`, 1);
  });
  let writing = format === 'csv' ? fh.write('time,provider,name,value,unit\n').then(() => undefined) : Promise.resolve();
  let rows = 0;
  let intervals = 0;
  let failed: Error | undefined;
  const board = new CounterBoard(shown, (i) => {
    const at = session.originWallNs === undefined ? new Date() : wallClock(session.originWallNs, i.timestampNs);
    const text = rowsText(i, at, format);
    rows += i.rows.length;
    intervals++;
    writing = writing.then(() => fh.write(text)).then(
      () => undefined,
      (e: Error) => {
        failed ??= e;
        void session.stop();
      },
    );
  });
  let stoppedHere = false;
  const stop = (): void => {
    stoppedHere = true;
    void session.stop();
  };
  const timer = durationMs === undefined ? undefined : setTimeout(stop, durationMs);
  process.on('SIGINT', stop).on('SIGTERM', stop);
  writeErr(`collecting counters of process ${session.pid} into ${file} (${format}); ${durationMs === undefined ? 'Ctrl-C stops' : `stops after ${durationMs / 1000} s or on Ctrl-C`}\n`);
  try {
    for await (const e of session.events()) board.push(e);
    await writing;
  } finally {
    clearTimeout(timer);
    process.off('SIGINT', stop).off('SIGTERM', stop);
    await fh.close();
  }
  if (failed) throw new CliError(`writing ${file} failed: ${failed.message}`, 1);
  writeErr(`wrote ${rows} rows (${intervals} intervals) to ${file}${stoppedHere ? '' : `; the session ended in process ${session.pid}`}\n`);
  return 0;
}
