import { once } from 'node:events';

/** Writes a line to stdout, waiting when the pipe is full; a closed pipe (`| head`) ends quietly. */
export async function writeOut(text: string): Promise<void> {
  if (process.stdout.destroyed) return;
  if (!process.stdout.write(text)) await Promise.race([once(process.stdout, 'drain'), once(process.stdout, 'close')]);
}

process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});
