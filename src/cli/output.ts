/** Writes a line to stdout, waiting when the pipe is full; a closed pipe (`| head`) ends quietly. */
export async function writeOut(text: string): Promise<void> {
  const out = process.stdout;
  if (out.destroyed) return;
  if (out.write(text)) return;
  // Whichever comes first, both listeners go: a long dump waits here thousands of times.
  await new Promise<void>((resolve) => {
    const done = (): void => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}

process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});
