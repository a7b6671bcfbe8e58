import { drained } from '../export/export-output.js';

/** Writes a line to stdout, waiting when the pipe is full; a closed pipe (`| head`) ends quietly. */
export async function writeOut(text: string): Promise<void> {
  if (process.stdout.destroyed) return;
  if (!process.stdout.write(text)) await drained(process.stdout);
}

process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});
