import { parseBufferSizeMB } from '../../buffers/session-memory.js';
import { DROP_REASONS } from '../../format/drop-reason.js';
import { TraceFormatError } from '../../format/format-error.js';
import { LossTracker } from '../../format/loss-tracker.js';
import { TraceParser } from '../../format/trace-parser.js';
import { writeGcdump } from '../../heap/gcdump-file.js';
import { HeapGraphBuilder, SnapshotStreamError } from '../../heap/heap-graph-builder.js';
import { collectTracing, isProcessAlive, processInfo, stopTracing, TargetError } from '../../ipc/diagnostics-client.js';
import { checkCanCreate } from '../../sinks/private-file.js';
import { CliError } from '../cli-error.js';
import { defineCommand, QUIET_OPTION } from '../command/command-spec.js';
import { parseDuration } from '../duration-option.js';
import { formatBytes } from '../format-size.js';
import { writeErr, writeOut } from '../output.js';
import { GcdumpProgress } from './gcdump-progress.js';

const PROVIDER = 'Runtime.HeapSnapshot';
const STOP_RETRIES = 3;
const STOP_RETRY_MS = 500;

function defaultOutput(pid: number): string {
  const d = new Date();
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${pid}-${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}.gcdump`;
}

/** A process that is exiting closes its sockets before it is gone: give it a moment (bounded). */
async function exited(pid: number): Promise<boolean> {
  for (let i = 0; i < 20; i++) {
    if (!isProcessAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/** Drops anywhere in the session (gaps seen, counts reported, reasons given), as one phrase ('' when none). */
function lossReport(loss: LossTracker, reported: number, reasons: number[]): string {
  const counted = reasons.reduce((a, b) => a + b, 0);
  const dropped = Math.max(loss.dropped, reported, counted);
  if (dropped === 0) return '';
  const why = DROP_REASONS.map((r, i) => [r, reasons[i] ?? 0] as const).filter(([, n]) => n > 0).map(([r, n]) => `${n.toLocaleString('en-US')} ${r}`);
  return `${dropped.toLocaleString('en-US')} event${dropped === 1 ? ' was' : 's were'} dropped${why.length ? ` (${why.join(', ')})` : ''}`;
}

export const gcdumpCollectCommand = defineCommand({
  name: 'gcdump collect',
  summary: 'take a heap snapshot of a running process and write it as a .gcdump file',
  description:
    'Takes a heap snapshot of a running process (started with --import tracepipe/register) and writes it as a .gcdump file.\n' +
    'The snapshot streams through a Block session, so nothing is lost; if anything is, no file is written.',
  positionals: [],
  options: {
    pid: { type: 'string', value: 'N', required: true, description: 'the process (see `tracepipe ps`)' },
    output: { type: 'string', short: 'o', value: 'FILE', defaultText: '<pid>-<yyyymmdd>-<hhmmss>.gcdump', description: 'where to write the dump' },
    'buffer-size': { type: 'string', value: 'MB', default: '16', description: "the session's buffer in the target, in MiB (at least 1)" },
    every: { type: 'string', value: 'TIME', description: 'with --count: a series, one dump starting every TIME (30s, 5m, ...)', defaultText: 'one dump' },
    count: { type: 'string', value: 'K', default: '1', description: 'how many dumps in the series; in a series, {n} in the output name is the dump\'s number (1, 2, ...)' },
    ...QUIET_OPTION,
  },
  examples: [
    { args: ['--pid', '4242'], does: 'a heap snapshot of process 4242' },
    { args: ['--pid', '4242', '-o', 'before.gcdump'], does: 'the same, into before.gcdump' },
    { args: ['--pid', '4242', '--every', '30s', '--count', '3', '-o', 'leak-{n}.gcdump'], does: 'three dumps 30 s apart, for gcdump leaks' },
  ],
  run: ({ values }) => gcdumpCollect(values),
});

async function gcdumpCollect(values: { pid: string; output: string | undefined; 'buffer-size': string; every: string | undefined; count: string; quiet: boolean }): Promise<number> {
  if (!/^\d+$/.test(values.pid) || Number(values.pid) <= 0) throw new CliError(`--pid must be a process id, not '${values.pid}'`);
  const pid = Number(values.pid);
  // Bursts of V8's serialization outrun the tool for a moment: a buffer that absorbs them spares the
  // target's main thread from parking (it becomes resident only as far as it is used).
  const size = values['buffer-size'];
  const bufferSizeMB = parseBufferSizeMB(size);
  if (bufferSizeMB === undefined || bufferSizeMB < 1) throw new CliError(`--buffer-size must be a number of MiB, at least 1, not '${size}'`);
  const count = Number(values.count);
  if (!Number.isInteger(count) || count < 1 || !/^\d+$/.test(values.count)) throw new CliError(`--count must be a whole number, at least 1, not '${values.count}'`);
  if (count > 1 && values.every === undefined) throw new CliError('--count needs --every (how long from one dump to the next)');
  const everyMs = values.every === undefined ? 0 : parseDuration(values.every, '--every');
  const pattern = values.output ?? (count > 1 ? defaultOutput(pid).replace(/\.gcdump$/, '-{n}.gcdump') : defaultOutput(pid));
  if (count > 1 && !pattern.includes('{n}')) throw new CliError(`with --count ${count}, the output name needs {n} (the dump's number), as in leak-{n}.gcdump`);
  const files = Array.from({ length: count }, (_, i) => pattern.replaceAll('{n}', String(i + 1)));
  // Find out now, not after a snapshot of minutes, that a file cannot be written.
  for (const file of files) {
    try {
      checkCanCreate(file);
    } catch (e) {
      throw new CliError(`cannot write ${file}: ${(e as Error).message}`, 1);
    }
  }
  for (const [i, file] of files.entries()) {
    const started = performance.now();
    if (count > 1) writeErr(`dump ${i + 1} of ${count}\n`);
    const code = await collectOne(pid, file, bufferSizeMB, values.quiet);
    if (code !== 0 || i === count - 1) return code;
    const wait = everyMs - (performance.now() - started);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  return 0;
}

/** One snapshot of process `pid` into `file`: 0, or 1 with one line on stderr saying why no dump was written. */
async function collectOne(pid: number, file: string, bufferSizeMB: number, quiet: boolean): Promise<number> {
  const refuse = (why: string): number => {
    writeErr(`tracepipe: no dump written: ${why}\n`);
    return 1;
  };

  let info;
  let stream;
  try {
    info = await processInfo(pid);
    stream = await collectTracing(pid, { providers: PROVIDER, bufferingMode: 'block', bufferSizeMB, rundown: false });
  } catch (e) {
    if (e instanceof TargetError) throw new CliError(e.message, 1);
    throw e;
  }
  const builder = new HeapGraphBuilder(stream.sessionId, { pid, argv: info.argv, nodeVersion: info.nodeVersion });
  const loss = new LossTracker();
  const reasons: number[] = [];
  const progress = new GcdumpProgress(process.stderr, builder, quiet);
  let stopAsked = false;
  /** Drops the sequence points report (they arrive even when no event follows the drops). */
  let reportedDrops = 0;
  let stopFailed: string | undefined;
  let interrupted = false;
  /**
   * Ends the session, which flushes and closes the stream: once the snapshot is complete, or lost.
   * The target answers on its main thread, which may still be busy (finishing a snapshot whose events
   * it drops, or taking another tool's): a refused or timed-out request is tried again, a few times,
   * while the stream is still read; then the connection is closed, which ends the session too.
   */
  const stopSession = (): void => {
    if (stopAsked) return;
    stopAsked = true;
    const attempt = (left: number): void => {
      stopTracing(pid, stream.sessionId).catch((err: Error) => {
        if (left > 0 && isProcessAlive(pid)) return void setTimeout(() => attempt(left - 1), STOP_RETRY_MS);
        stopFailed = err.message;
        stream.close();
      });
    };
    attempt(STOP_RETRIES);
  };
  const parser = new TraceParser({
    event: (e) => {
      loss.observe(e.threadId, e.sequence);
      builder.event(e);
      if (builder.ended) stopSession();
    },
    sequencePoint: (sp) => {
      loss.progress(sp);
      // A drop may have taken the end event itself: waiting for it would be waiting forever.
      reportedDrops = Math.max(reportedDrops, sp.dropped());
      if (reportedDrops > 0) stopSession();
    },
    dropReasons: (threads) => {
      for (const t of threads) t.counts.forEach((n, i) => (reasons[i] = (reasons[i] ?? 0) + n));
    },
  });
  const interrupt = (): void => {
    interrupted = true;
    stream.close();
  };
  process.on('SIGINT', interrupt).on('SIGTERM', interrupt);
  writeErr(`taking a heap snapshot of process ${pid} (${info.argv.join(' ')}), session ${stream.sessionId}\n`);
  progress.start();
  /** Why the stream cannot be trusted; `cut` when it merely stopped early (the target or the connection went). */
  let failure: string | undefined;
  let cut = false;
  try {
    for await (const chunk of stream) {
      progress.received(chunk.length);
      parser.push(chunk);
      progress.update();
    }
    parser.finish();
  } catch (e) {
    if (e instanceof SnapshotStreamError) failure = e.message;
    else if (e instanceof TraceFormatError) {
      failure = e.message;
      cut = e.code === 'truncated';
    } else if (typeof (e as NodeJS.ErrnoException).code === 'string') {
      failure = (e as Error).message;
      cut = true;
    } else throw e;
    stream.close();
  } finally {
    progress.stop();
    process.off('SIGINT', interrupt).off('SIGTERM', interrupt);
  }
  if (interrupted) return refuse('interrupted');
  // Attempts after the last event that never arrived count as dropped only in a complete stream.
  if (parser.complete) loss.finish();
  const lost = lossReport(loss, reportedDrops, reasons);
  if (lost) return refuse(lost);
  if (!builder.ended) {
    const where = `${builder.nodeCount.toLocaleString('en-US')} of ${builder.declaredNodes.toLocaleString('en-US')} nodes, ${builder.edgeCount.toLocaleString('en-US')} of ${builder.declaredEdges.toLocaleString('en-US')} edges received`;
    if (failure && !cut) return refuse(failure);
    if (await exited(pid)) return refuse(`process ${pid} exited during the heap snapshot (${where})`);
    return refuse(`the connection to process ${pid} ended during the heap snapshot (${where})`);
  }
  // A stream cut after the end event (a StopTracing the target could not answer in time, say, while
  // another tool's snapshot held its main thread) lost nothing of the snapshot: the counts below decide.
  if (failure && !cut) return refuse(failure);
  let graph;
  try {
    graph = builder.finish();
  } catch (e) {
    if (e instanceof SnapshotStreamError) return refuse(e.message);
    throw e;
  }
  let bytes: number;
  try {
    bytes = writeGcdump(file, graph);
  } catch (e) {
    return refuse(`cannot write ${file}: ${(e as Error).message}`);
  }
  const skipped = graph.origin.skippedValues > 0 ? `\n  note: ${graph.origin.skippedValues.toLocaleString('en-US')} numbers of allocation-tracking sections were not carried` : '';
  const closed = stopFailed ? `\n  note: the session was ended by closing the connection (StopTracing failed: ${stopFailed})` : '';
  await writeOut(
    `wrote ${file}: ${graph.nodeCount.toLocaleString('en-US')} nodes and ${graph.edgeCount.toLocaleString('en-US')} edges (V8's declared counts), ${graph.stringCount.toLocaleString('en-US')} strings, ${formatBytes(bytes)}\n` +
      `  the target spent ${(graph.origin.durationMs / 1000).toFixed(1)} s taking and streaming it; ${formatBytes(progress.bytes)} received in ${(progress.elapsedMs / 1000).toFixed(1)} s, nothing dropped${skipped}${closed}\n`,
  );
  return 0;
}
