/**
 * The startup session (seed 001's DOTNET_EnableEventPipe): tracing configured by environment variables,
 * so an application is traced from its first event without a code change.
 *
 *   TRACEPIPE_ENABLE=1               start a session when tracepipe/register loads
 *   TRACEPIPE_OUTPUT=path            file to write ('{pid}' is replaced); default tracepipe-{pid}.tptrace
 *   TRACEPIPE_PROVIDERS=spec         provider spec; default: the 'default' profile
 *   TRACEPIPE_BUFFER_SIZE_MB=n       the session's buffer budget; default 64
 *   TRACEPIPE_BUFFERING_MODE=mode    drop (default) or block
 *   TRACEPIPE_RUNDOWN=0              no rundown events as the session ends (default 1)
 *   TRACEPIPE_OTLP_ENDPOINT=url      also (without TRACEPIPE_OUTPUT: only) export over OTLP/HTTP to this collector;
 *                                    OpenTelemetry's OTEL_EXPORTER_OTLP_ENDPOINT is honoured too
 *   TRACEPIPE_OTLP_HEADERS=k=v,...   headers for the collector (or OTEL_EXPORTER_OTLP_HEADERS)
 *   TRACEPIPE_SERVICE_NAME=name      the resource's service.name (or OTEL_SERVICE_NAME)
 */
import { parseBufferSizeMB, type StreamingModeName } from '../buffers/session-memory.js';
import { normalizeProviders } from '../session/provider-spec.js';
import { flushSessionsOnExit, startSession, type TraceSession, watchSessions } from '../session/session.js';
import { checkOtlpOutput, type OtlpOutput } from '../session/otlp-output.js';
import { findProfile } from '../session/trace-profiles.js';
import { holdSignalFlush } from './exit-flush.js';
import { loadNativeAddon } from '../session/native-addon.js';

interface StartupConfig {
  readonly output: string | undefined;
  readonly otlp: OtlpOutput | undefined;
  readonly providers: string;
  readonly bufferSizeMB: number;
  readonly bufferingMode: StreamingModeName;
  readonly rundown: boolean;
}

class StartupConfigError extends Error {
  override readonly name = 'StartupConfigError';
}

const DEFAULT_OUTPUT = 'tracepipe-{pid}.tptrace';

/** The startup session `env` asks for, or undefined when it asks for none; throws on a bad setting. */
function startupConfig(env: NodeJS.ProcessEnv, pid: number): StartupConfig | undefined {
  const enable = env.TRACEPIPE_ENABLE;
  if (enable === undefined || enable === '' || enable === '0') return undefined;
  if (enable !== '1') throw new StartupConfigError(`TRACEPIPE_ENABLE must be 1 or 0, not '${enable}'`);
  const providers = env.TRACEPIPE_PROVIDERS || findProfile('default')!.providers;
  try {
    normalizeProviders(providers);
  } catch (e) {
    throw new StartupConfigError(`TRACEPIPE_PROVIDERS: ${(e as Error).message}`);
  }
  const size = env.TRACEPIPE_BUFFER_SIZE_MB || '64';
  const bufferSizeMB = parseBufferSizeMB(size.trim());
  if (bufferSizeMB === undefined) throw new StartupConfigError(`TRACEPIPE_BUFFER_SIZE_MB must be a positive number of MiB, not '${size}'`);
  const mode = (env.TRACEPIPE_BUFFERING_MODE || 'drop').toLowerCase();
  if (mode !== 'drop' && mode !== 'block') throw new StartupConfigError(`TRACEPIPE_BUFFERING_MODE must be drop or block, not '${env.TRACEPIPE_BUFFERING_MODE}'`);
  const rundown = env.TRACEPIPE_RUNDOWN || '1';
  if (rundown !== '0' && rundown !== '1') throw new StartupConfigError(`TRACEPIPE_RUNDOWN must be 1 or 0, not '${rundown}'`);
  const otlp = otlpConfig(env);
  // With a collector and no file named, the session only exports: no file appears unasked.
  const output = otlp && !env.TRACEPIPE_OUTPUT ? undefined : (env.TRACEPIPE_OUTPUT || DEFAULT_OUTPUT).replaceAll('{pid}', String(pid));
  return { output, otlp, providers, bufferSizeMB, bufferingMode: mode, rundown: rundown === '1' };
}

/**
 * OTLP headers as OpenTelemetry's environment variables give them: `key=value` pairs, comma
 * separated, values percent-encoded (W3C Baggage's syntax).
 */
function parseHeaders(name: string, text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    if (at <= 0) throw new StartupConfigError(`${name} must be key=value pairs separated by commas, not '${text}'`);
    try {
      headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new StartupConfigError(`${name}: '${pair}' is not percent-encoded properly`);
    }
  }
  return headers;
}

/** The OTLP export the environment asks for: tracepipe's variables first, then OpenTelemetry's. */
function otlpConfig(env: NodeJS.ProcessEnv): OtlpOutput | undefined {
  const endpointVar = env.TRACEPIPE_OTLP_ENDPOINT ? 'TRACEPIPE_OTLP_ENDPOINT' : env.OTEL_EXPORTER_OTLP_ENDPOINT ? 'OTEL_EXPORTER_OTLP_ENDPOINT' : undefined;
  if (!endpointVar) return undefined;
  const headersVar = env.TRACEPIPE_OTLP_HEADERS ? 'TRACEPIPE_OTLP_HEADERS' : env.OTEL_EXPORTER_OTLP_HEADERS ? 'OTEL_EXPORTER_OTLP_HEADERS' : undefined;
  const serviceName = env.TRACEPIPE_SERVICE_NAME || env.OTEL_SERVICE_NAME;
  const otlp = { endpoint: env[endpointVar]!, ...(headersVar ? { headers: parseHeaders(headersVar, env[headersVar]!) } : {}), ...(serviceName ? { serviceName } : {}) };
  try {
    return checkOtlpOutput(otlp);
  } catch (e) {
    throw new StartupConfigError(`${endpointVar}: ${(e as Error).message}`);
  }
}

/**
 * Starts the session `env` asks for. It does not keep the process alive, and its file is complete
 * however the process ends: normally, process.exit(), an uncaught exception, SIGINT, SIGTERM or SIGHUP.
 */
/**
 * Whether the startup session `env` asks for will drain through a worker (which register warms while
 * the session starts): not where the native drain serves it (a file in Drop mode, without an OTLP
 * export; see src/sinks/native-drain.ts). A wrong guess costs only time: an unused warm worker is discarded.
 */
export function startupDrainIsWorker(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.TRACEPIPE_BUFFERING_MODE || 'drop').toLowerCase() !== 'drop' || env.TRACEPIPE_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT) return true;
  return env.TRACEPIPE_NATIVE_DRAIN === '0' || loadNativeAddon('native_drain').addon === undefined;
}

export async function startStartupSession(env: NodeJS.ProcessEnv = process.env): Promise<TraceSession | undefined> {
  const config = startupConfig(env, process.pid);
  if (!config) return undefined;
  // Child processes inherit the environment: without '{pid}' in the path they would overwrite this file.
  if (!(env.TRACEPIPE_OUTPUT ?? DEFAULT_OUTPUT).includes('{pid}')) delete env.TRACEPIPE_ENABLE;
  const { output, otlp, ...settings } = config;
  // Held before the session starts: a signal while its drain starts (its file may be open already)
  // ends the stream too, not only one that comes once it runs.
  const release = holdSignalFlush({ watchSessions, flushSessionsOnExit });
  let session: TraceSession;
  try {
    session = await startSession(output === undefined ? { ...settings, otlp: otlp!, keepProcessAlive: false } : { ...settings, output, ...(otlp ? { otlp } : {}), keepProcessAlive: false });
  } catch (e) {
    release();
    throw e;
  }
  void session.done.then(release);
  return session;
}
