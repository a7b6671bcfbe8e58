import { type ChildProcess, spawn } from 'node:child_process';
import { readTrace } from '../../format/trace-reader.js';
import type { TraceEvent } from '../../format/trace-event.js';
import { collectTracing, processInfo, stopTracing, TargetError, type TraceStream } from '../../ipc/diagnostics-client.js';
import { CliError } from '../cli-error.js';
import { writeErr } from '../output.js';

/** How long a launched command gets to start its diagnostics server. */
const LAUNCH_READY_MS = 15_000;
/** How long a stop waits for the target to end the stream before the connection is closed. */
const STOP_WAIT_MS = 5_000;

/** Where the counters come from: a running process, or a command launched for the purpose. */
export interface CounterTarget {
  readonly pid?: number;
  readonly command?: readonly string[];
}

/**
 * A session streaming counters from a target: `events()` yields its events as they arrive and ends
 * when the session does (stopped, or the target gone); `stop()` ends it in the target, bounded.
 */
export class CounterSession {
  private stopping: Promise<void> | undefined;
  private ended = false;
  /** Wall clock (ns since the epoch) at the trace's origin, once the stream's header has come. */
  originWallNs: bigint | undefined;

  private constructor(
    readonly pid: number,
    readonly argv: readonly string[],
    private readonly stream: TraceStream,
    readonly child: ChildProcess | undefined,
  ) {}

  static async open(target: CounterTarget, providers: string, childOutput: 'inherit' | 'ignore'): Promise<CounterSession> {
    let child: ChildProcess | undefined;
    let pid = target.pid;
    if (target.command) {
      child = launch(target.command, childOutput);
      pid = child.pid!;
    }
    try {
      const info = child ? await waitUntilAttachable(child) : await processInfo(pid!);
      const stream = await collectTracing(pid!, { providers, bufferingMode: 'drop', bufferSizeMB: 4, rundown: false });
      return new CounterSession(pid!, info.argv, stream, child);
    } catch (e) {
      child?.kill();
      if (e instanceof TargetError) throw new CliError(e.message, 1);
      throw e;
    }
  }

  get sessionId(): number {
    return this.stream.sessionId;
  }

  /** The session's events in the order the stream has them; a broken connection ends them with a note. */
  async *events(): AsyncGenerator<TraceEvent> {
    try {
      for await (const batch of readTrace(this.stream).batches({ order: 'stream' })) {
        this.originWallNs ??= BigInt(batch.header.clock.wallClockNs);
        yield* batch.events;
      }
    } catch (e) {
      if (!this.stopping) writeErr(`tracepipe: the stream from process ${this.pid} broke off: ${(e as Error).message}\n`);
    } finally {
      this.ended = true;
    }
  }

  /** Stops the session in the target (it flushes and ends the stream); closes the connection if that does not happen in time. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.ended) return;
      const timer = setTimeout(() => this.stream.close(), STOP_WAIT_MS);
      try {
        await stopTracing(this.pid, this.sessionId);
      } catch {
        // The target is gone or cannot answer: closing the connection ends the session there, if it still runs.
        this.stream.close();
      } finally {
        clearTimeout(timer);
      }
    })();
    return this.stopping;
  }
}

function launch(command: readonly string[], output: 'inherit' | 'ignore'): ChildProcess {
  const register = new URL('../../register.js', import.meta.url).href;
  const env = { ...process.env, NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${register}`].filter(Boolean).join(' ') };
  const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', output, output], env });
  // A command that cannot start reports it as an 'error' event too; the pid check below says so.
  child.on('error', () => undefined);
  if (child.pid === undefined) throw new CliError(`cannot run '${command[0]}'`, 1);
  return child;
}

/** Asks the launched process until its diagnostics server answers; fails if it exits first or takes too long. */
async function waitUntilAttachable(child: ChildProcess): Promise<{ argv: readonly string[] }> {
  const deadline = performance.now() + LAUNCH_READY_MS;
  let last: unknown;
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new CliError(`'${child.spawnargs.join(' ')}' exited (${child.signalCode ?? `code ${child.exitCode}`}) before it could be monitored`, 1);
    try {
      return await processInfo(child.pid!);
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new CliError(`'${child.spawnargs.join(' ')}' did not become attachable within ${LAUNCH_READY_MS / 1000} s: ${(last as Error)?.message}`, 1);
}
