import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { constants } from 'node:os';
import { basename, extname, resolve } from 'node:path';
import { parseBufferSizeMB } from '../buffers/session-memory.js';
import { readTrace } from '../format/trace-reader.js';
import { collectTracing, processInfo, stopTracing, TargetError } from '../ipc/diagnostics-client.js';
import { OtlpSink } from '../sinks/otlp-sink.js';
import { openPrivateFile } from '../sinks/private-file.js';
import { checkOtlpOutput } from '../session/otlp-output.js';
import type { OtlpSinkSpec } from '../session/drain-protocol.js';
import { findProfile, TRACE_PROFILES, withProviders } from '../session/trace-profiles.js';
import { CliError, UsageError } from './cli-error.js';
import { usageText } from './command/command-help.js';
import { defineCommand, type OptionValues } from './command/command-spec.js';
import { countOf } from './format-count.js';
import { formatBytes } from './format-size.js';
import { formatNs } from './format-time.js';
import { CollectProgress } from './collect-progress.js';
import { parseDuration } from './duration-option.js';
import { writeErr, writeOut } from './output.js';

interface Plan {
  readonly providers: string;
  readonly bufferingMode: 'drop' | 'block';
  readonly bufferSizeMB: number;
  readonly rundown: boolean;
  readonly durationMs: number | undefined;
  readonly output: string | undefined;
  /** Also export to this OTLP/HTTP collector. */
  readonly otlp: OtlpSinkSpec | undefined;
  readonly quiet: boolean;
}

function plan(values: OptionValues<typeof COLLECT_OPTIONS>): Plan {
  const profileName = values.profile;
  const explicit = values.providers;
  let providers: string;
  if (profileName === undefined && explicit !== undefined) providers = explicit;
  else {
    const profile = findProfile(profileName ?? 'default');
    if (!profile) throw new CliError(`unknown profile '${profileName}'; profiles: ${TRACE_PROFILES.map((p) => p.name).join(', ')}`);
    providers = withProviders(profile, explicit);
  }
  const buffering = values.buffering;
  if (buffering !== 'drop' && buffering !== 'block') throw new CliError(`--buffering must be drop or block, not '${buffering}'`);
  const size = values['buffer-size'];
  const bufferSizeMB = parseBufferSizeMB(size);
  if (bufferSizeMB === undefined) throw new CliError(`--buffer-size must be a positive number of MiB, not '${size}'`);
  const duration = values.duration;
  return {
    providers,
    bufferingMode: buffering,
    bufferSizeMB,
    rundown: !values['no-rundown'],
    durationMs: duration === undefined ? undefined : parseDuration(duration),
    output: values.output,
    otlp: values.otlp === undefined ? undefined : otlpSpec(values.otlp),
    quiet: values.quiet,
  };
}

/** How often the collected stream's OTLP batches are looked at (they go out at least every second). */
const OTLP_POLL_MS = 250;
/** How long collect waits, at its end, for its OTLP sender to post what is queued: a tool that no process exit hurries. */
const TOOL_CLOSE_WAIT_MS = 10_000;

function otlpSpec(endpoint: string): OtlpSinkSpec {
  try {
    return checkOtlpOutput({ endpoint });
  } catch (e) {
    throw new CliError(`--otlp: ${(e as Error).message.replace(/^otlp\.endpoint/, 'the collector')}`);
  }
}

/** `<app>_<yyyymmdd>_<hhmmss>.tptrace`, the app being the script a node command runs, or the command. */
function defaultOutput(argv: readonly string[]): string {
  const isNode = argv.length > 1 && /^node(\.exe)?$/i.test(basename(argv[0] ?? ''));
  const script = (isNode ? argv.find((a, i) => i > 0 && !a.startsWith('-')) : argv[0]) ?? 'trace';
  const app = basename(script, extname(script)).replace(/[^\w.-]/g, '_') || 'trace';
  const d = new Date();
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${app}_${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}_${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}.tptrace`;
}

/** Reads the file back: what it holds, what was lost, whether it is complete. Exit code 0 only when complete. */
async function summarize(file: string, elapsedMs: number, ending?: string): Promise<number> {
  let s;
  try {
    s = await readTrace(file).summary();
  } catch (e) {
    await writeOut(`no trace written to ${file}: ${(e as Error).message}\n`);
    return 1;
  }
  const attempts = s.events + s.dropped;
  const share = attempts > 0 ? ` (${((100 * s.dropped) / attempts).toFixed(2)}% of attempts)` : '';
  const lines = [
    `wrote ${file}`,
    `  ${s.events.toLocaleString('en-US')} events, ${s.dropped.toLocaleString('en-US')} dropped${share}, ${formatBytes(s.bytes)}, events span ${formatNs(s.durationNs)}, collected for ${(elapsedMs / 1000).toFixed(1)} s`,
  ];
  if (ending) lines.push(ending);
  if (s.dropped > 0) lines.push('  to lose fewer events: a bigger --buffer-size, or --buffering block (producers wait instead)');
  if (!s.complete) lines.push(`WARNING: the trace is incomplete (${s.error?.message ?? 'no end-of-stream block'}); tools read what is there`);
  await writeOut(`${lines.join('\n')}\n`);
  return s.complete ? 0 : 1;
}

function targetFailure(e: unknown): never {
  if (e instanceof TargetError) throw new CliError(e.message, 1);
  throw e;
}

async function attach(pid: number, p: Plan): Promise<number> {
  const info = await processInfo(pid).catch(targetFailure);
  const file = p.output ?? defaultOutput(info.argv);
  const fh = await openPrivateFile(file).catch((e: Error) => {
    throw new CliError(`cannot write ${file}: ${e.message}`, 1);
  });
  let stream;
  try {
    stream = await collectTracing(pid, { providers: p.providers, bufferingMode: p.bufferingMode, bufferSizeMB: p.bufferSizeMB, rundown: p.rundown });
  } catch (e) {
    await fh.close();
    await rm(file, { force: true });
    return targetFailure(e);
  }
  // The target streams its binary trace here, and this process makes the OTLP requests: the target pays nothing for them.
  const otlp = p.otlp ? new OtlpSink(p.otlp, TOOL_CLOSE_WAIT_MS) : undefined;
  const batches = otlp ? setInterval(() => otlp.poll(), OTLP_POLL_MS) : undefined;
  const progress = new CollectProgress(process.stderr, p.quiet);
  const until = p.durationMs === undefined ? 'Ctrl-C stops' : `stops after ${(p.durationMs / 1000).toFixed(1)} s or on Ctrl-C`;
  writeErr(`collecting session ${stream.sessionId} from process ${pid} (${info.argv.join(' ')}) into ${file}; ${until}\n  providers ${p.providers}\n`);
  let stopping = false;
  let abandoned = false;
  const stop = (): void => {
    if (stopping) {
      abandoned = true;
      return stream.close();
    }
    stopping = true;
    // The target flushes and ends the stream; the reply comes once it has.
    stopTracing(pid, stream.sessionId).catch((e: Error) => {
      writeErr(`\ntracepipe: could not stop session ${stream.sessionId} cleanly (${e.message}); closing the connection\n`);
      stream.close();
    });
  };
  const timer = p.durationMs === undefined ? undefined : setTimeout(stop, p.durationMs);
  process.on('SIGINT', stop).on('SIGTERM', stop);
  progress.start();
  let lost: string | undefined;
  try {
    for await (const chunk of stream) {
      progress.push(chunk);
      otlp?.write(chunk);
      await fh.write(chunk);
    }
  } catch (e) {
    lost = (e as Error).message;
  } finally {
    clearTimeout(timer);
    clearInterval(batches);
    process.off('SIGINT', stop).off('SIGTERM', stop);
    progress.stop();
    await fh.close();
  }
  if (otlp) {
    otlp.close();
    const o = otlp.stats();
    writeErr(`exported to ${p.otlp!.endpoint}: ${countOf(o.itemsSent, 'item')} sent (${countOf(o.spansSent, 'span')}), ${countOf(o.itemsDropped, 'item')} dropped\n`);
  }
  if (abandoned) process.stderr.write('tracepipe: stopped waiting for the end of the stream\n');
  else if (lost) writeErr(`tracepipe: the connection to process ${pid} failed: ${lost}\n`);
  return summarize(file, progress.elapsedMs);
}

async function launch(command: readonly string[], p: Plan): Promise<number> {
  const requested = resolve(p.output ?? defaultOutput(command));
  const register = new URL('../register.js', import.meta.url).href;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TRACEPIPE_ENABLE: '1',
    TRACEPIPE_OUTPUT: requested,
    TRACEPIPE_PROVIDERS: p.providers,
    TRACEPIPE_BUFFER_SIZE_MB: String(p.bufferSizeMB),
    TRACEPIPE_BUFFERING_MODE: p.bufferingMode,
    TRACEPIPE_RUNDOWN: p.rundown ? '1' : '0',
    ...(p.otlp ? { TRACEPIPE_OTLP_ENDPOINT: p.otlp.endpoint } : {}),
    NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${register}`].filter(Boolean).join(' '),
  };
  const started = performance.now();
  const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit', env });
  await new Promise((resolveSpawn, reject) => {
    child.once('spawn', resolveSpawn);
    child.once('error', (e) => reject(new CliError(`cannot run '${command[0]}': ${e.message}`, 1)));
  });
  const file = requested.replaceAll('{pid}', String(child.pid));
  const forward = (signal: NodeJS.Signals): void => {
    // A terminal's Ctrl-C reaches the whole foreground group, the child included; send it only once.
    if (signal === 'SIGINT' && process.stdin.isTTY) return;
    child.kill(signal);
  };
  process.on('SIGINT', forward).on('SIGTERM', forward);
  let timer: NodeJS.Timeout | undefined;
  if (p.durationMs !== undefined) {
    timer = setTimeout(() => {
      void stopStartupSession(child.pid!).catch((e: Error) => process.stderr.write(`tracepipe: could not stop the session after --duration: ${e.message}\n`));
    }, p.durationMs);
  }
  process.stderr.write(`launched ${command.join(' ')} (pid ${child.pid}), tracing into ${file}\n`);
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
    child.once('exit', (code, signal) => resolveExit({ code, signal }));
  }).finally(() => {
    clearTimeout(timer);
    process.off('SIGINT', forward).off('SIGTERM', forward);
  });
  // As a shell reports it: a CI job whose command was killed (a timeout's SIGTERM, an abort) must not read as a success.
  const status = exit.signal ? 128 + (constants.signals[exit.signal] ?? 0) : (exit.code ?? 1);
  const ending = exit.signal ? `was killed by ${exit.signal} (exit status ${status})` : `exited with code ${exit.code}`;
  process.stderr.write(`${command[0]} ${ending}\n`);
  const traced = await summarize(file, performance.now() - started, `  the command ${ending}`);
  // Ctrl-C: a shell stops its loop or script only if the command died of SIGINT, so this does too.
  if (exit.signal === 'SIGINT') process.kill(process.pid, 'SIGINT');
  return status !== 0 ? status : traced;
}

/** The startup session is the child's oldest session that no client is streaming. */
async function stopStartupSession(pid: number): Promise<void> {
  const info = await processInfo(pid);
  const session = info.sessions.filter((s) => !s.attached).sort((a, b) => a.id - b.id)[0];
  if (!session) throw new Error(`process ${pid} has no startup session running`);
  await stopTracing(pid, session.id);
}

const COLLECT_OPTIONS = {
  pid: { type: 'string', value: 'N', defaultText: 'none: give --pid N or -- CMD ARGS...', description: 'attach to this running process (started with --import tracepipe/register)' },
  providers: { type: 'string', value: 'SPEC', defaultText: "the profile's", description: 'providers to enable: Name[:Keywords[:Level[:key=value;...]]], comma separated' },
  profile: { type: 'string', value: 'NAME', defaultText: "'default' when --providers is not given", description: 'a named set of providers (see --list-profiles); with --providers, both apply' },
  output: { type: 'string', short: 'o', value: 'FILE', defaultText: '<app>_<date>_<time>.tptrace', description: 'where to write the trace' },
  buffering: { type: 'string', value: 'drop|block', default: 'drop', description: 'when the buffer is full: drop events, or make producers wait' },
  'buffer-size': { type: 'string', value: 'MB', default: '64', description: "the session's buffer budget in MiB" },
  duration: { type: 'string', value: 'TIME', defaultText: 'until Ctrl-C, or until CMD exits', description: 'stop after TIME (500ms, 10s, 5m, 1h; a bare number is seconds)' },
  otlp: { type: 'string', value: 'URL', defaultText: 'none', description: 'also export to this OpenTelemetry collector over OTLP/HTTP, e.g. http://localhost:4318 (docs/OTLP.md)' },
  'no-rundown': { type: 'boolean', description: 'do not ask providers for end-of-session state (rundown)' },
  'list-profiles': { type: 'boolean', description: 'list the profiles with their providers, and exit' },
  quiet: { type: 'boolean', short: 'q', description: 'no progress on stderr (a live line on a terminal, otherwise a line per second)' },
} as const;

export const collectCommand = defineCommand({
  name: 'collect',
  summary: 'trace a running process, or launch one traced',
  description:
    'Traces a running process (--pid), or launches a command traced from its start and stops when it exits (-- CMD ARGS...).\n' +
    'It shows events, bytes and drops as it goes. Ctrl-C stops the session and leaves a complete file; a second Ctrl-C gives up\n' +
    'waiting for it.',
  positionals: [],
  options: COLLECT_OPTIONS,
  rest: { name: 'CMD ARGS...', description: 'a command to launch traced (node app.js, npm test, ...)' },
  forms: ['--pid N [options]', '[options] -- CMD ARGS...', '--list-profiles'],
  examples: [
    { args: ['--pid', '4242', '--duration', '10s'], does: 'ten seconds of process 4242, default profile' },
    { args: ['--pid', '4242', '--otlp', 'http://localhost:4318'], does: 'process 4242 into a file and to an OpenTelemetry collector' },
    { args: ['--profile', 'all', '-o', 'app.tptrace', '--', 'node', 'app.js'], does: 'launches node app.js traced, every provider on' },
  ],
  async run({ values, rest: command }) {
    if (values['list-profiles']) {
      const w = Math.max(...TRACE_PROFILES.map((p) => p.name.length));
      await writeOut(TRACE_PROFILES.map((p) => `${p.name.padEnd(w)}  ${p.description}\n${' '.repeat(w)}  ${p.providers}\n`).join(''));
      return 0;
    }
    const p = plan(values);
    if (values.pid !== undefined) {
      if (command.length > 0) throw new CliError('give either --pid N or -- CMD ARGS..., not both');
      if (!/^\d+$/.test(values.pid) || Number(values.pid) <= 0) throw new CliError(`--pid must be a process id, not '${values.pid}'`);
      return attach(Number(values.pid), p);
    }
    if (command.length === 0) throw new UsageError('collect needs --pid N, or -- CMD ARGS... to launch', usageText(collectCommand));
    return launch(command, p);
  },
});
