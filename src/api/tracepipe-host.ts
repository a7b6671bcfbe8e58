import type { DiagnosticServer } from '../ipc/diagnostics-server.js';
import { loadDiagnosticsServer, loadSessionMachinery, loadSessionMachineryNow, sessionMachineryIfLoaded } from '../machinery.js';
import { CounterType } from '../schema/counter-type.js';
import { type EnabledFlag, EventType, type WriterMirror } from '../schema/event-type.js';
import { defineHostProvider, definitionSignature, type ProviderEnablement, type ProviderImpl, providerRegistry } from '../schema/provider.js';
import { type ComponentProvider, foreignHost, HOST_KEY, HOST_VERSION, mayHost, type ProviderHost, WAITING_KEY } from '../schema/provider-host.js';
import { type SpanMethodMirror, SpanType } from '../schema/span-type.js';
import type { SessionOptions, TraceSession } from '../session/session.js';
import { tracepipeVersion } from '../session/version.js';
import { errorMessage } from '../schema/error-message.js';

/**
 * This thread's host (docs/LITE.md): the first copy of tracepipe a thread loads installs it on
 * globalThis; providers from tracepipe/lite and from other copies of tracepipe hand themselves to it,
 * and it runs the only sessions, diagnostics server and span context in the thread. Other copies'
 * session functions are the host's.
 */
export interface TracepipeHost extends ProviderHost {
  readonly tracepipeVersion: string;
  readonly startSession: typeof localStartSession;
  readonly liveSessions: typeof localLiveSessions;
  readonly startDiagnosticServer: typeof localStartDiagnosticServer;
}

/**
 * This copy's session functions. Sessions and the diagnostics server load on first use
 * (src/machinery.ts); until sessions have loaded, none exists.
 */
function localStartSession(options: SessionOptions): Promise<TraceSession> {
  // Loaded at once where Node can (require() of ES modules): the calling thread then records from the
  // call on (docs/BUFFERING.md, "Before the drain runs"). Elsewhere the session starts once it has loaded.
  const now = loadSessionMachineryNow();
  if (now) {
    try {
      return now.session.startSession(options);
    } catch (e) {
      return Promise.reject(e);
    }
  }
  return loadSessionMachinery().then((m) => m.session.startSession(options));
}

function localLiveSessions(): readonly TraceSession[] {
  return sessionMachineryIfLoaded()?.session.liveSessions() ?? [];
}

async function localStartDiagnosticServer(): Promise<DiagnosticServer> {
  return (await loadDiagnosticsServer()).startDiagnosticServer();
}

/** Runtime providers come with every copy; the host's own serve the thread, silently. */
const BUILT_IN = /^(Runtime|Node)\./;

const reported = new Set<string>();

/** One line on stderr per problem and provider: the application runs on, the provider stays disabled. */
function refuse(key: string, message: string): false {
  if (!reported.has(key)) {
    reported.add(key);
    process.stderr.write(`tracepipe: ${message}\n`);
  }
  return false;
}

type Linked = Record<string, unknown> & EnabledFlag;

/** Makes a component's objects front ends of the host's provider `p`: same flags, same writers. */
function link(p: ProviderImpl, c: ComponentProvider): void {
  p.addMirror(c.provider as { enablements: readonly ProviderEnablement[] });
  for (const [name, object] of Object.entries(c.members)) {
    const own = (p as unknown as Record<string, unknown>)[name];
    const m = object as Linked;
    if (own instanceof EventType) {
      own.addWriterMirror(m as unknown as WriterMirror);
      own.addMirror(m);
    } else if (own instanceof SpanType) {
      own.addMethodMirror(m as unknown as SpanMethodMirror);
      own.beginType.addMirror(m);
    } else if (own instanceof CounterType) {
      if (typeof m.value === 'number' && Number.isFinite(m.value)) own.value += m.value;
      m.set = own.set;
      m.add = own.add;
      own.type.addMirror(m);
    }
  }
}

function adopt(c: ComponentProvider): boolean {
  if (typeof c !== 'object' || c === null || typeof c.name !== 'string' || typeof c.members !== 'object' || c.members === null || typeof c.provider !== 'object' || c.provider === null) {
    return refuse('malformed', 'a provider was handed to the host without a name, members or provider object; it stays disabled');
  }
  const { name, abi } = c;
  if (!(Number.isInteger(abi) && abi >= 1 && abi <= HOST_VERSION)) {
    return refuse(`abi:${name}`, `provider '${name}' was built for host interface ${String(abi)}, but tracepipe ${tracepipeVersion()} hosts this process and speaks 1 to ${HOST_VERSION}; its events stay disabled (upgrade tracepipe)`);
  }
  try {
    const existing = providerRegistry.get(name);
    if (existing) {
      // The same library twice (two copies, two versions of it): one provider, events from both.
      if (existing.signature === definitionSignature(c.definition as Parameters<typeof definitionSignature>[0])) {
        link(existing, c);
        return true;
      }
      return BUILT_IN.test(name) ? false : refuse(`differs:${name}`, `provider '${name}' is defined twice in this thread, differently (two versions of a library?); the later definition stays disabled`);
    }
    link(defineHostProvider(name, c.definition as Parameters<typeof defineHostProvider>[1], true), c);
    return true;
  } catch (e) {
    return refuse(`invalid:${name}`, `provider '${name}' cannot be traced: ${errorMessage(e)}; it stays disabled`);
  }
}

const host: TracepipeHost = Object.freeze({
  version: HOST_VERSION,
  // Read when another copy asks, not as this one loads.
  get tracepipeVersion(): string {
    return tracepipeVersion();
  },
  register: adopt,
  startSession: localStartSession,
  liveSessions: localLiveSessions,
  startDiagnosticServer: localStartDiagnosticServer,
});

if (mayHost) {
  Object.defineProperty(globalThis, HOST_KEY, { value: host, enumerable: false, writable: false, configurable: false });
  const waiting = (globalThis as Record<symbol, unknown>)[WAITING_KEY];
  if (Array.isArray(waiting)) for (const c of waiting.splice(0)) adopt(c as ComponentProvider);
}

/**
 * The public session functions: the host's when another copy hosts this thread (every host since
 * interface version 1 has them), so sessions started from any copy are the thread's one set.
 */
const other = foreignHost as TracepipeHost | undefined;
export const startSession: typeof localStartSession = other ? other.startSession : localStartSession;
export const liveSessions: typeof localLiveSessions = other ? other.liveSessions : localLiveSessions;
export const startDiagnosticServer: typeof localStartDiagnosticServer = other ? other.startDiagnosticServer : localStartDiagnosticServer;
