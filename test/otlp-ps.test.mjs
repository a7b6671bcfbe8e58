// `tracepipe ps` shows a live OTLP export's counts (items sent and, when the collector refuses them
// with a 400, which is not retried, items dropped); `collect --pid N --otlp URL` exports what it collects.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dumpJsonl } from './helpers/convert-helpers.mjs';
import { CLI, startTarget, useTmpdir, waitFor } from './helpers/ipc-processes.mjs';
import { startReceiver } from './helpers/otlp-receiver.mjs';

const TARGET = fileURLToPath(new URL('./fixtures/otlp-ps-target.mjs', import.meta.url));

const dir = await useTmpdir(after);

const ps = (dir, ...args) =>
  new Promise((resolve) => execFile(process.execPath, [CLI, 'ps', ...args], { env: { ...process.env, TMPDIR: dir }, timeout: 30_000 }, (err, out) => resolve({ code: err ? err.code : 0, out })));

test('ps: an OTLP export refused by its collector shows its items dropped', async (t) => {
  const receiver = await startReceiver({ answer: ({ signal }) => ({ status: signal === 'traces' ? 400 : 200 }) });
  t.after(() => receiver.close());
  const target = await startTarget(t, dir, { script: TARGET, args: [receiver.url] });
  const session = await waitFor('ps to show the dropped spans', async () => {
    const r = await ps(dir, '--json');
    const s = JSON.parse(r.out).find((x) => x.pid === target.pid)?.info?.sessions[0];
    return s?.otlp?.dropped === 600 ? s : undefined;
  });
  assert.ok(session.otlp.sent >= 0);
  const text = await ps(dir);
  assert.match(text.out, new RegExp(`${target.pid}\\s+\\S+\\s+1 \\(#\\d+ otlp [\\d,]+ items? sent, 600 items dropped\\)`));
  await target.exit();
});

/** `tracepipe collect --pid` of the target's Test.Other for 1 s, to `file` and to the collector at `url`. */
function collectOtlp(target, file, url) {
  return new Promise((resolve) =>
    execFile(process.execPath, [CLI, 'collect', '--pid', String(target.pid), '--providers', 'Test.Other', '--duration', '1s', '--otlp', url, '-o', file, '-q'], { env: { ...process.env, TMPDIR: dir }, timeout: 60_000 }, (err, out, errOut) =>
      resolve({ code: err ? err.code : 0, out, errOut }),
    ),
  );
}

test('collect --pid N --otlp URL: the file, and every event of it at the collector', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const target = await startTarget(t, dir, {});
  const file = join(dir, 'collected.tptrace');
  const r = await collectOtlp(target, file, receiver.url);
  assert.equal(r.code, 0, r.errOut);
  const dump = await dumpJsonl(file);
  const pings = dump.events.filter((e) => e.name === 'Ping').length;
  assert.ok(pings > 0);
  // First what the tool counted: a shortfall at the collector is then either counted or a loss.
  assert.match(r.errOut, new RegExp(`exported to ${receiver.url}: [\\d,]+ items sent \\(0 spans\\), 0 items dropped`));
  const logs = receiver.received.logs.flatMap((req) => req.resourceLogs.flatMap((rl) => rl.scopeLogs.flatMap((sl) => sl.logRecords)));
  assert.equal(logs.filter((l) => l.body?.stringValue === 'Test.Other/Ping').length, pings);
  await target.exit();
});

// collect makes the requests in its own process, which no process exit hurries: at its end the
// sender gets 10 s, where a traced process's drain gives 2 s. A collector that takes 4 s over the
// first request got everything after it dropped.
test('collect --otlp waits at its end for a slow collector: every event arrives, none dropped', async (t) => {
  const receiver = await startReceiver({ answer: ({ n }) => (n === 1 ? { delayMs: 4000 } : {}) });
  t.after(() => receiver.close());
  const target = await startTarget(t, dir, {});
  const file = join(dir, 'slow.tptrace');
  const r = await collectOtlp(target, file, receiver.url);
  assert.equal(r.code, 0, r.errOut);
  assert.match(r.errOut, new RegExp(`exported to ${receiver.url}: [\\d,]+ items sent \\(0 spans\\), 0 items dropped`));
  const pings = (await dumpJsonl(file)).events.filter((e) => e.name === 'Ping').length;
  const logs = receiver.received.logs.flatMap((req) => req.resourceLogs.flatMap((rl) => rl.scopeLogs.flatMap((sl) => sl.logRecords)));
  assert.equal(logs.filter((l) => l.body?.stringValue === 'Test.Other/Ping').length, pings);
  await target.exit();
});

test('collect --otlp with a bad URL is one line, exit 2', async () => {
  const r = await new Promise((resolve) => execFile(process.execPath, [CLI, 'collect', '--pid', '1', '--otlp', 'localhost:4318'], (err, out, errOut) => resolve({ code: err?.code, errOut })));
  assert.equal(r.code, 2);
  assert.match(r.errOut, /^tracepipe: --otlp: the collector must be an http or https URL, not "localhost:4318"\n/);
});
