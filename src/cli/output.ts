import { drained } from '../export/export-output.js';
import { printableText } from './printable.js';

/** Writes text to stdout, control characters escaped (see printable.ts), waiting when the pipe is full; a closed pipe (`| head`) ends quietly. */
export function writeOut(text: string): Promise<void> {
  return writeExact(printableText(text));
}

/** Writes text to stdout as it is: only for a format that must stay exact (CSV) and is not shown on a terminal. */
export async function writeExact(text: string): Promise<void> {
  if (process.stdout.destroyed) return;
  if (!process.stdout.write(text)) await drained(process.stdout);
}

/** Writes text to stderr, control characters escaped. */
export function writeErr(text: string): void {
  process.stderr.write(printableText(text));
}

process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});
