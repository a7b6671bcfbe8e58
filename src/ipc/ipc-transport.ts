/**
 * Where diagnostics endpoints live and how they are opened: a Unix domain socket
 * `$TMPDIR/tracepipe-<pid>-<key>.sock` (mode 0600) or, on Windows, a named pipe of the same name. The
 * key is the process start time, so an endpoint left by a dead process never matches a new one that
 * reuses its pid.
 */
import type { Server, Socket } from 'node:net';
import { requireBuiltin } from '../schema/this-thread.js';
const { chmodSync, lstatSync, mkdtempSync, readdirSync, renameSync, rmdirSync, rmSync, unlinkSync } = requireBuiltin('node:fs') as typeof import('node:fs');
const net = requireBuiltin('node:net') as typeof import('node:net');
const { tmpdir } = requireBuiltin('node:os') as typeof import('node:os');
const { join } = requireBuiltin('node:path') as typeof import('node:path');

const isWindows = process.platform === 'win32';
const PIPE_DIR = '\\\\.\\pipe\\';
const NAME = isWindows ? /^tracepipe-(\d+)-([0-9a-z]+)$/ : /^tracepipe-(\d+)-([0-9a-z]+)\.sock$/;

export interface Endpoint {
  readonly pid: number;
  readonly key: string;
  readonly path: string;
}

/**
 * This process's disambiguation key: its start time in base 36. From its uptime, not
 * `performance.timeOrigin`: the `performance` global loads perf_hooks, heap that the diagnostics
 * server's start would otherwise add to an idle process (docs/IPC.md).
 */
export function processKey(): string {
  return Math.round(Date.now() - process.uptime() * 1000).toString(36);
}

export function endpointPath(pid: number, key: string): string {
  return isWindows ? `${PIPE_DIR}tracepipe-${pid}-${key}` : join(tmpdir(), `tracepipe-${pid}-${key}.sock`);
}

/** Endpoints this user could connect to (on Unix: sockets this user owns, so no one can pose as a target). */
export function listEndpoints(): Endpoint[] {
  const dir = isWindows ? PIPE_DIR : tmpdir();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const uid = process.getuid?.();
  const out: Endpoint[] = [];
  for (const name of names) {
    const m = NAME.exec(name);
    if (!m) continue;
    const path = isWindows ? `${PIPE_DIR}${name}` : join(dir, name);
    if (!isWindows) {
      try {
        const st = lstatSync(path);
        if (!st.isSocket() || (uid !== undefined && st.uid !== uid)) continue;
      } catch {
        continue;
      }
    }
    out.push({ pid: Number(m[1]), key: m[2]!, path });
  }
  return out;
}

/** net.Server's setup of a listening handle, which listen() ends in (Node's name for it since its early days). */
type SetupListenHandle = (this: Server, address: string, port: number, addressType: number) => void;

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      resolve();
    });
    // listen() first loads Node's cluster module (and child_process with it: ~0.2 MB of heap, which an
    // idle process would pay for in a V8 memory-reducer collection) to ask whether a cluster primary
    // should listen instead. An exclusive listen never asks it: it ends in this setup, called directly
    // (port and address type -1: a pipe) where it exists.
    const setup = (server as unknown as { _listen2?: SetupListenHandle })._listen2;
    if (typeof setup === 'function') setup.call(server, path, -1, -1);
    // exclusive: a cluster worker listens itself instead of asking the primary to.
    else server.listen({ path, exclusive: true });
  });
}

/**
 * Listens on `path` with no moment at which another user could connect: the socket is created in a
 * fresh 0700 directory, made 0600, then renamed into place (a bound socket keeps working when renamed).
 */
export async function listenPrivately(server: Server, path: string): Promise<void> {
  if (isWindows) return listen(server, path);
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-'));
  const staged = join(dir, 'diag.sock');
  try {
    await listen(server, staged);
    chmodSync(staged, 0o600);
    renameSync(staged, path);
  } catch (e) {
    if (server.listening) server.close();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  // Empty now: removed without the recursive removal, which would load more of Node into an idle process.
  rmdirSync(dir);
}

export function removeEndpoint(path: string): void {
  if (isWindows) return;
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

export function connectEndpoint(path: string, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ path, allowHalfOpen: true });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(Object.assign(new Error(`timed out connecting to ${path}`), { code: 'ETIMEDOUT' }));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/**
 * Hands a connected socket's descriptor to another thread. This thread stops reading it first, so it
 * never notices the peer leaving and never closes the descriptor while the other thread writes; the
 * caller destroys the socket once that thread is done. Undefined where there is no descriptor
 * (Windows named pipes).
 */
export function takeDescriptor(socket: Socket): number | undefined {
  const handle = (socket as unknown as { _handle?: { fd?: unknown; reading?: boolean; readStop?: () => number } })._handle;
  if (!handle || typeof handle.fd !== 'number' || handle.fd < 0 || typeof handle.readStop !== 'function') return undefined;
  socket.removeAllListeners('data');
  socket.pause();
  handle.reading = false;
  handle.readStop();
  return handle.fd;
}
