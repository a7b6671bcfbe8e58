import { createRequire } from 'node:module';

/**
 * Node's builtins without importing them as ES modules: that reads every one of a module's exports,
 * and the lazy ones of node:fs and node:util load node:stream, the MIME parser and parseArgs, which
 * nothing that `import 'tracepipe'` runs uses. The process hands them out where Node can (20.16 and
 * later); elsewhere require() does.
 */
export const requireBuiltin: (id: string) => unknown = process.getBuiltinModule ?? createRequire(import.meta.url);

/**
 * node:worker_threads, which a worker thread has loaded before its own code runs; on the main thread
 * loading it loads node:stream and the worker machinery (~35 of Node's modules) as well.
 */
export function workerThreads(): typeof import('node:worker_threads') {
  return requireBuiltin('node:worker_threads') as typeof import('node:worker_threads');
}

let main: boolean | undefined;

/**
 * Whether this is the process's main thread, known without worker_threads where /proc says it: on
 * Linux the main thread's id is the process id, which `/proc/thread-self` names. Anywhere else, or if
 * /proc says otherwise, worker_threads decides (in a worker it is loaded already).
 */
export function isMainThread(): boolean {
  if (main === undefined) {
    try {
      const { readlinkSync } = requireBuiltin('node:fs') as typeof import('node:fs');
      main = readlinkSync('/proc/thread-self') === `${process.pid}/task/${process.pid}` || undefined;
    } catch {
      // No /proc: ask worker_threads.
    }
    main ??= workerThreads().isMainThread;
  }
  return main;
}

/**
 * Whether this thread has loaded node:worker_threads, asked without loading it. On the main thread
 * no worker thread exists before it has: a worker is made only through it. Where Node lists its loaded
 * modules otherwise than as this reads them, it says yes.
 */
export function workerThreadsLoaded(): boolean {
  const list = (process as { moduleLoadList?: unknown }).moduleLoadList;
  return !Array.isArray(list) || !list.some((m) => typeof m === 'string' && m.startsWith('NativeModule ')) || list.includes('NativeModule worker_threads');
}

/** This thread's id as worker_threads numbers it: 0 on the main thread. */
export function threadId(): number {
  return isMainThread() ? 0 : workerThreads().threadId;
}

/** workerData key marking tracepipe's own helper threads (the stall watchdog, a drain). */
export const SERVICE_THREAD_KEY = 'tracepipe:service-thread';

let service: boolean | undefined;

/** Whether this is one of tracepipe's own helper threads (session/service-thread.ts). */
export function inServiceThread(): boolean {
  if (service === undefined) {
    const data: unknown = isMainThread() ? undefined : workerThreads().workerData;
    service = typeof data === 'object' && data !== null && (data as Record<string, unknown>)[SERVICE_THREAD_KEY] === true;
  }
  return service;
}

let importsInFlight = 0;

/**
 * Counts `loading`, an import() of tracepipe's own modules just made, until it settles. Node's
 * require() of an ES module that an import() under way has reached but not yet evaluated throws
 * ("Cannot read properties of undefined (reading 'getStatus')", Node 20.19+): a startup session
 * failed to start whenever the diagnostics server's import was still loading (a loaded machine).
 * While any is in flight, loading goes through import() too.
 */
export function trackImport<T>(loading: Promise<T>): Promise<T> {
  importsInFlight++;
  const settled = (): void => {
    importsInFlight--;
  };
  loading.then(settled, settled);
  return loading;
}

/**
 * import() of one of tracepipe's own ES modules (a file: URL), counted as trackImport counts. The
 * bundles that run as scripts (src/bundle-script.ts) cannot import() themselves: a script
 * compiled by node:vm has no module loader of its own.
 */
export function importTracked(url: string | URL): Promise<unknown> {
  return trackImport(import(String(url)));
}

/** Whether this thread may load an ES module with require() now: Node can (20.19 and later) and no import() of ours is under way. */
export function canRequireModules(): boolean {
  return importsInFlight === 0 && (process.features as { require_module?: boolean }).require_module === true;
}

let moduleRequire: NodeJS.Require | undefined;
let scriptBundles: ((href: string) => object | undefined) | undefined;

/** How requireNow runs the bundles that run as scripts: src/bundle-script.ts, as it loads. */
export function runScriptBundlesWith(load: (href: string) => object | undefined): void {
  scriptBundles = load;
}

/**
 * The ES module at `url` (a file: URL of one of tracepipe's own), loaded now with require() where this
 * thread may (canRequireModules): in this thread, without import()'s round trips. Undefined where it
 * may not, or where Node 20's require() refuses a module that an import() under way (the
 * application's own, of tracepipe/export or the trace reader, which share modules with it) has
 * reached but not yet evaluated: the caller imports it then, which says what any other failure was.
 * A bundle that runs as a script runs without its ES module (src/bundle-script.ts).
 */
export function requireNow(url: string | URL): unknown {
  if (!canRequireModules()) return undefined;
  try {
    const bundle = scriptBundles?.(String(url));
    if (bundle !== undefined) return bundle;
  } catch {
    // Its body (or one it imports) failed, or is running: the caller's import() says what happened.
    return undefined;
  }
  // One require() for every module (each is named by its whole path): making one is path work of its own.
  moduleRequire ??= createRequire(import.meta.url);
  const { fileURLToPath } = requireBuiltin('node:url') as typeof import('node:url');
  try {
    return moduleRequire(fileURLToPath(url));
  } catch {
    return undefined;
  }
}
