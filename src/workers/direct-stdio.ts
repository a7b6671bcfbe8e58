/**
 * Imported first by each of tracepipe's own threads in a traced process (the drain, the stall watchdog,
 * the OTLP sender): what the thread writes to its process.stdout or process.stderr (a warning, a
 * console line) goes straight to the process's file descriptor 1 or 2, written synchronously.
 *
 * Why: a worker whose output Node forwards (`stdout: false`, the default) makes the main thread pipe it
 * into the main thread's process.stdout and process.stderr, which creates them. For a pipe, that sets
 * O_NONBLOCK on the file description the process shares with whatever else writes to it (the shell's
 * next command, a child with inherited stdio, `fs.writeSync(1, …)`, which then fails with EAGAIN), and
 * it gives Node's stream code more kinds of object than the application has (BENCHMARKS.md §6). The
 * threads are started with `stdout: true, stderr: true` (SERVICE_STDIO) and this module writes their
 * output instead, so an application that never touched its stdio finds it as it left it.
 */
import { requireBuiltin } from '../schema/this-thread.js';
const { writeSync } = requireBuiltin('node:fs') as typeof import('node:fs');

type Callback = (error?: Error | null) => void;

function directTo(stream: NodeJS.WriteStream, fd: number): void {
  stream.write = ((chunk: string | Uint8Array, encoding?: BufferEncoding | Callback, callback?: Callback): boolean => {
    const done = typeof encoding === 'function' ? encoding : callback;
    try {
      if (typeof chunk === 'string') writeSync(fd, chunk, null, typeof encoding === 'string' ? encoding : 'utf8');
      else writeSync(fd, chunk);
    } catch {
      // A closed descriptor, or a full one the application made non-blocking: the line is lost, as
      // it would be to a reader that went away; the thread goes on.
    }
    if (done) queueMicrotask(() => done(null));
    return true;
  }) as NodeJS.WriteStream['write'];
}

directTo(process.stdout, 1);
directTo(process.stderr, 2);
