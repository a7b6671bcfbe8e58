// The processes of the pinned HTTP benchmarks (http-overhead, otlp): the Node.js versions to measure,
// processes started under taskset with every wait bounded, the autocannon load generator and its load, and one
// JSON server (json-server.mjs) per variant.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { wholeFromEnv } from './whole-from-env.mjs';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SERVER = fileURLToPath(new URL('./json-server.mjs', import.meta.url));
const LOAD = fileURLToPath(new URL('./autocannon-load.mjs', import.meta.url));
export const TIMEOUT_S = 60;

/**
 * The Node.js versions to measure: this one with this checkout, and BENCH_NODES's
 * (`BENCH_NODES=/path/to/node24=/path/to/tree24,...`: a Node binary, and a checkout of this code whose
 * native addon was built for it; without `=tree`, this checkout, if its addon loads there).
 */
export function nodesToMeasure() {
  const nodes = [{ bin: process.execPath, tree: ROOT }];
  for (const entry of (process.env.BENCH_NODES ?? '').split(',').map((x) => x.trim()).filter(Boolean)) {
    const [bin, tree = ROOT] = entry.split('=');
    nodes.push({ bin, tree: resolve(tree) });
  }
  return nodes.map((n) => ({ ...n, version: checkedNode(n) }));
}

/** The version of `bin`, once it is known to load `tree`'s build and native addon (else the figures would measure a fallback). */
function checkedNode({ bin, tree }) {
  const probe = `const { loadNativeAddon } = await import(${JSON.stringify(pathToFileURL(join(tree, 'dist/session/native-addon.js')).href)}); const r = loadNativeAddon('gc_hook'); console.log(r.addon ? process.version : 'missing: ' + r.missing);`;
  const r = spawnSync(bin, ['--input-type=module', '-e', probe], { encoding: 'utf8', env: { ...process.env, TRACEPIPE_GC_HOOK: '1' } });
  if (r.error) throw new Error(`BENCH_NODES: cannot run '${bin}' (${r.error.code ?? r.error.message})`);
  const out = r.stdout.trim();
  if (r.status !== 0 || !out.startsWith('v')) {
    throw new Error(`BENCH_NODES: ${bin} with ${tree}: ${out || r.stderr.trim().split('\n')[0]}; build that checkout for it (N=<node package dir>; PATH="$N/bin:$PATH" npm_config_nodedir="$N" npm run install; npx tsc -p tsconfig.json)`);
  }
  return out;
}

/** `node args` under the `prefix` pinning (support/pinning.mjs). */
export function spawnPinned(prefix, args, options, node = process.execPath) {
  const argv = [...(prefix ?? []), node, ...args];
  return spawn(argv[0], argv.slice(1), { cwd: ROOT, ...options });
}

/** `promise`, or a clear error if `child` exits first or nothing comes within `timeoutS`. */
export function bounded(child, what, promise, timeoutS = TIMEOUT_S) {
  return new Promise((resolve, reject) => {
    const onExit = (code, signal) => finish(reject, new Error(`${what}: the process exited (${signal ?? code}) first`));
    const timer = setTimeout(() => finish(reject, new Error(`${what}: nothing after ${timeoutS} s`)), timeoutS * 1000);
    function finish(settle, value) {
      clearTimeout(timer);
      child.off('exit', onExit);
      settle(value);
    }
    child.once('exit', onExit);
    promise.then((v) => finish(resolve, v), (e) => finish(reject, e));
  });
}

export function exited(child, what) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  let timer;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: still running after ${TIMEOUT_S} s`)), TIMEOUT_S * 1000)));
  return Promise.race([once(child, 'exit'), late]).finally(() => clearTimeout(timer));
}

export const alive = (child) => child.exitCode === null && child.signalCode === null;

/**
 * The load: autocannon's connections and requests in flight per connection (BENCH_HTTP_CONNECTIONS,
 * BENCH_HTTP_PIPELINING). What the CPU per request measures depends on the server being saturated: on
 * a machine where waking a process is slow, 10 connections one request at a time leave the server
 * waiting on the round trip, and its CPU per request then counts its idle and wake-up costs. More in
 * flight (pipelining) keeps it busy (BENCHMARKS.md §6; server-regime.mjs tells which regime a run had).
 */
export function httpLoad() {
  const load = { connections: wholeFromEnv('BENCH_HTTP_CONNECTIONS', 10), pipelining: wholeFromEnv('BENCH_HTTP_PIPELINING', 1) };
  return { ...load, text: `autocannon -c ${load.connections}${load.pipelining > 1 ? ` -p ${load.pipelining}` : ''}` };
}

/** The load generator (pinned to `pin.load`): `run(url, seconds, amount?)` is one autocannon run of `load` (httpLoad()), for `seconds` or `amount` requests. */
export function startLoader(pin, { connections, pipelining }) {
  const child = spawnPinned(pin.load, [LOAD], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async run(url, seconds, amount) {
      child.stdin.write(`${JSON.stringify({ url, seconds, amount, connections, pipelining })}\n`);
      // A run of `amount` requests gets at least 20 a second (a server under Valgrind next to other work is that slow).
      const { value, done } = await bounded(child, `load of ${url}`, lines.next(), amount ? Math.max(TIMEOUT_S, amount / 20) : TIMEOUT_S);
      if (done) throw new Error(`load of ${url}: no result`);
      return JSON.parse(value);
    },
    async close() {
      child.stdin.end();
      await exited(child, 'the load generator');
    },
    kill: () => alive(child) && child.kill('SIGKILL'),
  };
}

/**
 * A fresh json-server.mjs of `kind` (plain, node-hooks, opentelemetry, opentelemetry-otlp) on `node`,
 * pinned to `pin.server`; with `providers`, a startup session of them (and `env`'s TRACEPIPE_* settings)
 * loaded with `--import tracepipe/register` as a user does (`register: true` loads it with no session,
 * for what loading it costs); `nodeFlags` go before it. `ask(message)` is one IPC exchange; `stop()`
 * ends the server and says what it served (and what its tracer counted).
 */
export async function startJsonServer({ name, kind, node, pin, providers, env = {}, nodeFlags = [], register = Boolean(providers) }) {
  const traced = providers ? { TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: providers } : {};
  const nodeArgs = [...nodeFlags, ...(register ? [`--import=${pathToFileURL(join(node.tree, 'dist/register.js')).href}`] : [])];
  const child = spawnPinned(pin.server, [...nodeArgs, SERVER, kind], { env: { ...process.env, ...traced, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }, node.bin);
  const what = `${name} server (Node ${node.version})`;
  const reply = (about) => bounded(child, `${what}, ${about}`, once(child, 'message').then(([m]) => m));
  const ask = (message) => {
    child.send(message);
    return reply(`'${message}'`);
  };
  let port;
  try {
    ({ port } = await reply('start'));
  } catch (e) {
    // Nothing else would end a server that never said it started.
    if (alive(child)) child.kill('SIGKILL');
    throw e;
  }
  return {
    child,
    url: `http://127.0.0.1:${port}/api/items`,
    ask,
    async stop() {
      const result = await ask('stop');
      await exited(child, what);
      return result;
    },
  };
}
