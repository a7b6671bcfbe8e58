// Issue 21 (a sibling of item 8): Node.Channels keeps its per-request state beside the application's
// objects, not on them, so what the application sees of a ClientRequest (its own keys, and so
// console.log of it) is the same traced as untraced, and the requests still become events and spans.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventRole, readTrace } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';

const APP = fileURLToPath(new URL('./fixtures/http-client-app.mjs', import.meta.url));
const REGISTER = fileURLToPath(new URL('../dist/register.js', import.meta.url));

test('a traced http request leaves the application’s ClientRequest as it is; its event and span are in the trace', { timeout: 60_000 }, async (t) => {
  const file = join(await tempDir(t), 'client.tptrace');
  const untraced = execFileSync(process.execPath, [APP], { encoding: 'utf8' });
  const traced = execFileSync(process.execPath, [`--import=${REGISTER}`, APP], {
    encoding: 'utf8',
    env: { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: 'Node.Channels:*:Verbose', TRACEPIPE_OUTPUT: file },
  });
  assert.deepEqual(JSON.parse(traced), JSON.parse(untraced));
  const seen = [];
  for await (const e of readTrace(file)) {
    const role = eventRole(e);
    if (e.name === 'HttpClientRequest' || e.name === 'UndiciRequest') seen.push(`${e.name} ${e.fields.status}`);
    if (role?.kind === 'span-end' && (role.span === 'HttpClient' || role.span === 'Fetch')) seen.push(`${role.span} end ${e.fields.status} error=${e.fields.error}`);
  }
  assert.deepEqual(seen.sort(), ['Fetch end 200 error=false', 'HttpClient end 200 error=false', 'HttpClientRequest 200', 'UndiciRequest 200']);
});
