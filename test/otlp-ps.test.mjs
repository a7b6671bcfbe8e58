// `tracepipe ps` shows a live OTLP export's counts: items sent and, when the collector refuses them
// (here a 400, which is not retried), items dropped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CLI, startTarget, useTmpdir, waitFor } from './helpers/ipc-processes.mjs';
import { startReceiver } from './helpers/otlp-receiver.mjs';

const TARGET = fileURLToPath(new URL('./fixtures/otlp-ps-target.mjs', import.meta.url));

const ps = (dir, ...args) =>
  new Promise((resolve) => execFile(process.execPath, [CLI, 'ps', ...args], { env: { ...process.env, TMPDIR: dir }, timeout: 30_000 }, (err, out) => resolve({ code: err ? err.code : 0, out })));

test('ps: an OTLP export refused by its collector shows its items dropped', async (t) => {
  const dir = await useTmpdir(t.after.bind(t));
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
