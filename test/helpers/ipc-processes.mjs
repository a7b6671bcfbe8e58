// Real processes for the IPC tests: a traced target (test/fixtures/ipc-target.mjs), the CLI, polling.
// Every process gets TMPDIR set to the test file's own directory (useTmpdir), so sockets of parallel
// test files never mix.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
export const TARGET = fileURLToPath(new URL('../fixtures/ipc-target.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Points this process's TMPDIR (where clients look for targets) at a fresh directory, removed at the end. */
export async function useTmpdir(after) {
  const dir = await mkdtemp(join(tmpdir(), 'tracepipe-ipc-'));
  process.env.TMPDIR = dir;
  after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Polls `fn` until it returns a truthy value (returned) or `timeoutMs` passes (throws, naming `what`). */
export async function waitFor(what, fn, timeoutMs = 20_000, everyMs = 50) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Starts the target (by default test/fixtures/ipc-target.mjs serve) with `--import tracepipe/register`;
 * resolves once it printed 'ready ...' (`ready` is that line) and its diagnostics socket answers. `ask(line)` sends a command on
 * its stdin and resolves to its reply line; `mem()` asks for its memory after a full GC. The process is
 * killed at test end. With `waitUntilReady: false` it resolves to `{ pid, child }` as soon as it is spawned.
 */
export async function startTarget(t, dir, { env = {}, nodeArgs = [], script = TARGET, args = ['serve'], waitUntilReady = true } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tracepipe/register', script, ...args], {
    cwd: ROOT,
    env: { ...process.env, TMPDIR: dir, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  if (!waitUntilReady) return { pid: child.pid, child };
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done || !first.value.startsWith('ready')) throw new Error(`target did not start: ${first.value}`);
  const { processInfo } = await import('../../dist/index.js');
  await waitFor('the target to answer ProcessInfo', () => processInfo(child.pid).then(() => true, () => false));
  const ask = async (line) => {
    child.stdin.write(`${line}\n`);
    const reply = await lines.next();
    if (reply.done) throw new Error(`the target exited instead of answering '${line}'`);
    return reply.value;
  };
  return {
    pid: child.pid,
    child,
    ready: first.value,
    ask,
    async mem() {
      return JSON.parse(await ask('mem'));
    },
    async exit() {
      child.stdin.end('exit\n');
      await once(child, 'exit');
    },
  };
}

/** Starts the CLI; `done` resolves to { code, signal, stdout, stderr } when it exits. */
export function startCli(t, dir, args, { env = {} } = {}) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, TMPDIR: dir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const done = once(child, 'exit').then(([code, signal]) => ({ code, signal, stdout, stderr }));
  return { child, done, output: () => stdout + stderr };
}
