// Node.Channels subscribes to Node's http channels, where libraries may publish messages of their own
// making (a request object with only some of IncomingMessage's properties). Its handlers must take
// them as they come: a handler that throws is rethrown by diagnostics_channel as an uncaught exception,
// which would crash the application only because it is traced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { channel } from 'node:diagnostics_channel';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { readTrace, startSession } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';

test('a server request published without raw headers is traced, and nothing throws', { timeout: 60_000 }, async (t) => {
  const file = join(await tempDir(t), 'foreign.tptrace');
  const uncaught = [];
  const onUncaught = (e) => uncaught.push(e);
  process.on('uncaughtException', onUncaught);
  t.after(() => process.off('uncaughtException', onUncaught));
  const session = await startSession({ providers: 'Node.Channels', output: file });
  const socket = { _bytesDispatched: 0, writableLength: 0, _pendingData: null };
  const request = { method: 'GET', url: '/made-by-a-library' };
  const response = { statusCode: 204 };
  channel('http.server.request.start').publish({ request, response, socket, server: null });
  channel('http.server.response.finish').publish({ request, response, socket, server: null });
  await turn();
  await session.stop();
  assert.deepEqual(uncaught.map((e) => e.message), []);
  const names = [];
  for await (const e of readTrace(file)) if (e.provider === 'Node.Channels') names.push(`${e.name} ${e.fields.url ?? ''}`.trim());
  assert.ok(names.some((n) => n.includes('/made-by-a-library')), names.join(', '));
});
