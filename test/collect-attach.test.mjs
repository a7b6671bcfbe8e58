// `tracepipe ps`, `collect --pid` and `stop` against real processes, as a user runs them.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processInfo, readTrace } from '../dist/index.js';
import { startCli, startTarget, useTmpdir, waitFor } from './helpers/ipc-processes.mjs';

const dir = await useTmpdir(after);

async function complete(file) {
  const s = await readTrace(file).summary();
  assert.equal(s.complete, true, `${file}: ${s.error?.message}`);
  return s;
}

const sessionCount = async (pid) => (await processInfo(pid)).sessions.length;

test('collect --duration: attaches, collects, stops by itself and leaves a complete file of the asked providers', async (t) => {
  const target = await startTarget(t, dir);
  const file = join(dir, 'duration.tptrace');
  const r = await startCli(t, dir, ['collect', '--pid', String(target.pid), '--providers', 'Test.App:0x1:Informational', '--duration', '2s', '-o', file]).done;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`collecting session \\d+ from process ${target.pid}`));
  // Not a terminal: plain progress lines.
  assert.match(r.stderr, /\n\d+\.\d s {2}[\d,]+ events {2}[\d.]+ (B|KiB|MiB), [\d,]+ dropped\n/);
  // Drop mode: a machine loaded past its cores may drop a few of the target's flood; every drop is
  // counted, the same in the tool's summary and in the file.
  const said = new RegExp(`wrote ${file}\\n {2}([\\d,]+) events, ([\\d,]+) dropped`).exec(r.stdout);
  assert.ok(said, r.stdout);
  const s = await complete(file);
  assert.equal(Number(said[2].replaceAll(',', '')), s.dropped, r.stdout);
  assert.ok(s.dropped <= s.events / 100, `at most 1 % dropped: ${r.stdout}`);
  assert.equal(statSync(file).mode & 0o077, 0, 'the trace holds argv and cwd: readable by its owner only');
  assert.ok(s.events > 0);
  assert.deepEqual(Object.keys(s.byEvent), ['Test.App/Tick']);
  assert.equal(s.header.pid, target.pid);
  assert.equal(s.header.session.providers, 'Test.App:0x1:4');
  await waitFor('the session to end in the target', async () => (await sessionCount(target.pid)) === 0);
});

test('two tools collect from one target at once, each getting only its own providers', async (t) => {
  const target = await startTarget(t, dir);
  const a = join(dir, 'two-a.tptrace');
  const b = join(dir, 'two-b.tptrace');
  const first = startCli(t, dir, ['collect', '--pid', String(target.pid), '--providers', 'Test.App:0x2', '--duration', '2s', '-o', a]);
  const second = startCli(t, dir, ['collect', '--pid', String(target.pid), '--providers', 'Test.Other', '--buffering', 'block', '--duration', '2s', '-o', b]);
  await waitFor('both sessions to run', async () => (await sessionCount(target.pid)) === 2);
  const [ra, rb] = await Promise.all([first.done, second.done]);
  assert.equal(ra.code, 0, ra.stderr);
  assert.equal(rb.code, 0, rb.stderr);
  const [sa, sb] = await Promise.all([complete(a), complete(b)]);
  assert.deepEqual(Object.keys(sa.byEvent), ['Test.App/Extra']);
  assert.deepEqual(Object.keys(sb.byEvent), ['Test.Other/Ping']);
  assert.equal(sb.header.session.bufferingMode, 'block');
  assert.notEqual(sa.header.session.id, sb.header.session.id);
});

test('SIGINT (Ctrl-C) to the CLI stops the session cleanly and leaves a complete file', async (t) => {
  const target = await startTarget(t, dir);
  const file = join(dir, 'sigint.tptrace');
  const cli = startCli(t, dir, ['collect', '--pid', String(target.pid), '--providers', 'Test.App', '-o', file]);
  await waitFor('events to arrive', () => existsSync(file) && statSync(file).size > 10_000);
  cli.child.kill('SIGINT');
  const r = await cli.done;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /wrote .*sigint\.tptrace/);
  const s = await complete(file);
  assert.ok(s.events > 0);
  await waitFor('the session to end in the target', async () => (await sessionCount(target.pid)) === 0);
});

test('SIGKILL of the CLI: the target notices, ends the session and frees it', async (t) => {
  const target = await startTarget(t, dir);
  const file = join(dir, 'sigkill.tptrace');
  const cli = startCli(t, dir, ['collect', '--pid', String(target.pid), '--providers', 'Test.App', '--buffer-size', '4', '-o', file]);
  await waitFor('the session to run', async () => (await sessionCount(target.pid)) === 1);
  cli.child.kill('SIGKILL');
  await cli.done;
  await waitFor('the session to end in the target', async () => (await sessionCount(target.pid)) === 0);
  // The target carries on and can be traced again.
  const again = await startCli(t, dir, ['collect', '--pid', String(target.pid), '--providers', 'Test.App', '--duration', '500ms', '-o', join(dir, 'again.tptrace')]).done;
  assert.equal(again.code, 0, again.stderr);
  await complete(join(dir, 'again.tptrace'));
  // A request the target refuses: its reason, exit 1, and no empty file left behind.
  const refused = await startCli(t, dir, ['collect', '--pid', String(target.pid), '--providers', '9lives', '-o', join(dir, 'refused.tptrace')]).done;
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^tracepipe: the target refused CollectTracing: bad provider name '9lives'/);
  assert.equal(existsSync(join(dir, 'refused.tptrace')), false);
});

test('the target ending (exit, or SIGTERM) while a collect streams: the stream is flushed first and the file is complete', async (t) => {
  for (const how of ['exit', 'SIGTERM']) {
    const target = await startTarget(t, dir);
    const file = join(dir, `target-${how}.tptrace`);
    const cli = startCli(t, dir, ['collect', '--pid', String(target.pid), '--providers', 'Test.App', '-o', file]);
    await waitFor('events to arrive', () => existsSync(file) && statSync(file).size > 10_000);
    if (how === 'exit') await target.exit();
    else target.child.kill('SIGTERM');
    const r = await cli.done;
    assert.equal(r.code, 0, `${how}: ${r.stderr}`);
    assert.ok((await complete(file)).events > 0);
    await waitFor('the target to be gone', () => target.child.exitCode !== null || target.child.signalCode !== null);
    // It died of the signal, as it would have untraced.
    if (how === 'SIGTERM') assert.equal(target.child.signalCode, 'SIGTERM');
  }
});

test('a target using signal-exit dies of SIGTERM while a collect streams, and after the tool detached', async (t) => {
  const script = fileURLToPath(new URL('./fixtures/signal-exit-target.mjs', import.meta.url));
  const died = (target) => waitFor('the target to die of SIGTERM', () => target.child.signalCode === 'SIGTERM', 20_000);
  const attached = await startTarget(t, dir, { script, args: [] });
  const file = join(dir, 'signal-exit.tptrace');
  const cli = startCli(t, dir, ['collect', '--pid', String(attached.pid), '--providers', 'Runtime.Process', '-o', file]);
  await waitFor('the session to run', async () => (await processInfo(attached.pid)).sessions.length === 1);
  attached.child.kill('SIGTERM');
  await died(attached);
  assert.equal((await cli.done).code, 0);
  assert.ok((await complete(file)).events > 0);

  const detached = await startTarget(t, dir, { script, args: [] });
  assert.equal((await startCli(t, dir, ['collect', '--pid', String(detached.pid), '--providers', 'Runtime.Process', '--duration', '200ms', '-o', join(dir, 'detached.tptrace')]).done).code, 0);
  detached.child.kill('SIGTERM');
  await died(detached);
});

test('ps lists the target and its sessions; stop ends a session that a collect is streaming', async (t) => {
  const target = await startTarget(t, dir);
  const file = join(dir, 'stopped.tptrace');
  const cli = startCli(t, dir, ['collect', '--pid', String(target.pid), '--providers', 'Test.App', '-o', file]);
  const info = await waitFor('the session to run', async () => {
    const i = await processInfo(target.pid);
    return i.sessions.length === 1 && i;
  });
  const id = info.sessions[0].id;

  const ps = await startCli(t, dir, ['ps']).done;
  assert.equal(ps.code, 0);
  assert.match(ps.stdout, /^PID +TRACEPIPE +SESSIONS +COMMAND\n/);
  assert.match(ps.stdout, new RegExp(`\\n${target.pid} +\\d+\\.\\d+\\.\\d+ +1 \\(#${id}\\) +node .*ipc-target\\.mjs serve\\n`));
  const json = JSON.parse((await startCli(t, dir, ['ps', '--json']).done).stdout);
  const listed = json.find((p) => p.pid === target.pid);
  assert.deepEqual(listed.info.sessions.map((s) => [s.id, s.attached]), [[id, true]]);

  const stop = await startCli(t, dir, ['stop', '--pid', String(target.pid), '--session', String(id)]).done;
  assert.equal(stop.code, 0, stop.stderr);
  assert.match(stop.stdout, new RegExp(`^stopped session ${id} of process ${target.pid}: [\\d,]+ events, 0 dropped`));
  const r = await cli.done;
  assert.equal(r.code, 0, r.stderr);
  await complete(file);

  const again = await startCli(t, dir, ['stop', '--pid', String(target.pid), '--session', String(id)]).done;
  assert.equal(again.code, 1);
  assert.equal(again.stderr, `tracepipe: the target refused StopTracing: no session ${id} in process ${target.pid}\n`);
});

test("a tool started right after its target waits for the target's endpoint instead of calling it not attachable", async (t) => {
  // As `node --import tracepipe/register app.js & tracepipe collect --pid $!` runs them: the endpoint opens
  // 100 ms after tracepipe/register loads, which is after the tool asks.
  const target = await startTarget(t, dir, { waitUntilReady: false });
  const info = await processInfo(target.pid);
  assert.equal(info.pid, target.pid);
  assert.deepEqual(info.sessions, []);
});

test('no such process, a process that is not attachable, bad options: one line, non-zero exit', async (t) => {
  const cases = [
    [['collect', '--pid', '999999999'], 1, /^tracepipe: no process with pid 999999999\n$/],
    [['collect', '--pid', String(process.pid)], 1, new RegExp(`^tracepipe: process ${process.pid} is not attachable: start it with 'node --import tracepipe/register'.*\\n$`)],
    [['stop', '--pid', String(process.pid), '--session', '1'], 1, /not attachable/],
    [['collect', '--pid', '1', '--profile', 'nope'], 2, /^tracepipe: unknown profile 'nope'; profiles: default, gc-verbose, cpu, all\n$/],
    [['collect', '--pid', '1', '--duration', 'soon'], 2, /--duration must look like/],
    [['collect', '--pid', '1', '--buffering', 'lossless'], 2, /--buffering must be drop or block/],
    [['collect', '--pid', 'x'], 2, /--pid must be a process id/],
  ];
  for (const [args, code, message] of cases) {
    const r = await startCli(t, dir, args).done;
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.equal(r.stderr.split('\n').length, 2, r.stderr);
  }
  // Neither a process nor a command: what is missing, then the usage.
  const r = await startCli(t, dir, ['collect']).done;
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^tracepipe: collect needs --pid N, or -- CMD ARGS\.\.\. to launch\nusage: tracepipe collect --pid N \[options\]\n/);
});

test('collect --list-profiles names each profile with its providers', async (t) => {
  const r = await startCli(t, dir, ['collect', '--list-profiles']).done;
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^default {5}runtime overview.*\n {12}Runtime\.GC:\*:Informational,Runtime\.GCHeap:\*:Informational,Runtime\.EventLoop:\*:Informational,Runtime\.Process:\*:Informational\n/);
  assert.match(r.stdout, /\ngc-verbose {2}.*\n/);
  assert.match(r.stdout, /\nall {9}.*\n/);
});
