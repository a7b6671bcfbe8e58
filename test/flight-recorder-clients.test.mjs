// Issue 21, item 2: a client that asks for a flight-recorder dump and never reads. Its dump must not
// keep the target alive, hold the drain, make the target's other dumps (SIGUSR2, rec.dump(), the
// crash dump) wait, or cost the target descriptors without bound: dumps to clients count against the
// server's 32 connections, and a dump to a client that takes nothing for 5 s is given up. And the
// other way round: the CLI gives up on a target that stops sending.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { listTargets, readTrace } from '../dist/index.js';
import { encodeSessionId } from '../dist/ipc/ipc-commands.js';
import { CommandSet, encodeFrame, TracingCommand } from '../dist/ipc/ipc-protocol.js';
import { tempDir } from './helpers/temp-dir.mjs';
import { CLI, useTmpdir, waitFor } from './helpers/ipc-processes.mjs';

const FIXTURE = fileURLToPath(new URL('./fixtures/flight-target.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DUMP_RECORDER = encodeFrame(CommandSet.Tracing, TracingCommand.DumpRecorder, encodeSessionId(0));
/** The server's limit on connections in flight (docs/IPC.md), dumps to clients included. */
const MAX_PENDING = 32;
const skip = existsSync('/proc/self/fd') ? false : 'counts descriptors in /proc';
// Where the targets' diagnostics sockets go, and where this process looks for them.
const tmp = await useTmpdir(after);

/**
 * The fixture in 'hold' mode with a 4 MiB ring (its dump is far larger than a socket's buffer), under
 * `--import tracepipe/register` so clients can attach. `say(line)` sends a command; `next()` reads a line.
 */
async function startHolder(t) {
  const dir = await tempDir(t);
  const child = spawn(process.execPath, ['--import', 'tracepipe/register', FIXTURE, 'hold', '150000', dir], {
    cwd: ROOT,
    env: { ...process.env, TMPDIR: tmp, FLIGHT_SIZE_MB: '4' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (what) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const line = await lines.next();
    clearTimeout(timer);
    assert.ok(!line.done, `the target ended while waiting for ${what}; stderr: ${stderr}`);
    return line.value;
  };
  assert.equal(await next('ready'), 'ready');
  const { endpoint } = await waitFor('the target to be listed', async () => (await listTargets()).find((x) => x.endpoint.pid === child.pid));
  const fds = () => readdirSync(`/proc/${child.pid}/fd`).length;
  /** The count once it holds still for 300 ms (the listing's own connection closes after its reply). */
  const settledFds = () =>
    waitFor('the descriptor count to settle', async () => {
      const n = fds();
      await new Promise((r) => setTimeout(r, 300));
      return fds() === n && n;
    });
  return { child, dir, endpoint, next, fds, settledFds, stderr: () => stderr, say: (line) => child.stdin.write(`${line}\n`), exited: once(child, 'exit') };
}

/** Clients that ask for a dump and never read a byte of it; closed when the test ends. */
function stalledClients(t, path, n) {
  const sockets = [];
  t.after(() => sockets.forEach((s) => s.destroy()));
  return Promise.all(
    Array.from({ length: n }, () => {
      const s = net.connect({ path });
      sockets.push(s);
      s.on('error', () => undefined);
      return once(s, 'connect').then(() => {
        s.pause();
        s.write(DUMP_RECORDER);
        return s;
      });
    }),
  );
}

test('300 clients that ask for a dump and never read: the target holds at most its 32 connections, and SIGUSR2, rec.dump() and a crash still dump at once', { skip, timeout: 120_000 }, async (t) => {
  const target = await startHolder(t);
  const baseline = await target.settledFds();
  const clients = await stalledClients(t, target.endpoint.path, 300);
  // Every request has arrived once the target has refused what it does not take (Busy) and closed those.
  let most = 0;
  await waitFor('the target to settle with the clients connected', async () => {
    const n = target.fds();
    most = Math.max(most, n);
    await new Promise((r) => setTimeout(r, 500));
    return target.fds() === n && n > baseline;
  });
  assert.ok(most - baseline <= MAX_PENDING + 8, `descriptors held for the clients: ${most - baseline} (at most ${MAX_PENDING} + a few)`);

  // The drain is serving a client that does not read, and 31 more wait: the target's own dumps go first.
  process.kill(target.child.pid, 'SIGUSR2');
  assert.match(await target.next('the SIGUSR2 dump'), /^dumped \S+ \d+$/);
  target.say('dump');
  const [, path] = (await target.next('rec.dump()')).split(' ');
  const s = await readTrace(path).summary();
  assert.equal(s.complete, true);
  assert.ok(s.events > 0);

  target.say('throw');
  const [code] = await target.exited;
  assert.equal(code, 1, "the exception's own exit code");
  assert.match(target.stderr(), /crash while clients wait/);
  assert.match(target.stderr(), /tracepipe: flight recorder: the last moments are in /, 'the crash dump did not wait for the clients');
  assert.equal(clients.length, 300);
});

test('a client that never reads its dump: the dump is given up after 5 s and its descriptor freed, the target is not kept alive by it', { skip, timeout: 60_000 }, async (t) => {
  const target = await startHolder(t);
  const baseline = await target.settledFds();
  const [client] = await stalledClients(t, target.endpoint.path, 1);
  await waitFor('the dump to start', () => target.fds() > baseline);
  // Given up: the target closes its end while the client is still connected and still not reading.
  await waitFor('the stalled dump to be given up', () => target.fds() === baseline, 20_000);
  assert.equal(client.destroyed, false);

  // Another stalled dump in progress does not hold the process once its own work is done.
  await stalledClients(t, target.endpoint.path, 1);
  await waitFor('the second dump to start', () => target.fds() > baseline);
  target.say('end');
  assert.equal(await target.next('the end of stdin'), 'ended');
  const ended = await Promise.race([target.exited, new Promise((r) => setTimeout(() => r('still running'), 4000))]);
  assert.deepEqual(ended, [0, null], 'the process ended with its work, not after the client');
});

test('tracepipe recorder dump gives up on a target that stops sending in the middle of its dump', { skip, timeout: 60_000 }, async (t) => {
  // A stand-in target: it answers DumpRecorder with its OK reply and then sends nothing more, as a
  // process stopped (SIGSTOP) or hung in the middle of a dump would.
  const { endpointPath } = await import('../dist/ipc/ipc-transport.js');
  const { okFrame } = await import('../dist/ipc/ipc-protocol.js');
  const server = net.createServer((s) => s.once('data', () => s.write(okFrame(encodeSessionId(1)))));
  await new Promise((r) => server.listen(endpointPath(process.pid, 'stalled'), r));
  t.after(() => server.close());
  const out = join(await tempDir(t), 'stalled.tptrace');
  // A shorter bound than the default 35 s (cli-help checks the default): the same silence, sooner.
  const started = Date.now();
  const cli = spawn(process.execPath, [CLI, 'recorder', 'dump', '--pid', String(process.pid), '-o', out, '--timeout', '1500ms'], { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => cli.kill('SIGKILL'));
  let stderr = '';
  cli.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const [code] = await once(cli, 'exit');
  assert.equal(code, 1);
  assert.match(stderr, /^tracepipe: process \d+ sent nothing for 1500 ms; .*stalled\.tptrace holds what arrived\n$/);
  assert.ok(Date.now() - started >= 1500, `gave up after ${Date.now() - started} ms, before the bound`);
});
