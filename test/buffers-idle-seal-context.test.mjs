// The idle-seal timer a thread's buffer arms when a write takes a chunk must not keep the async context
// of that write (an application's request, its AsyncLocalStorage stores) alive after it: the buffer
// keeps its timer for the session's life.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { tempDir } from './helpers/temp-dir.mjs';

test("a request whose event took a chunk: its AsyncLocalStorage store is collected once it is over, idle-seal timer or not", { timeout: 30_000 }, async (t) => {
  const file = join(await tempDir(t), 'context.tptrace');
  const child = fork(new URL('./fixtures/idle-seal-context.mjs', import.meta.url), [file], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [[message], [code]] = await Promise.all([once(child, 'message'), once(child, 'exit')]);
  assert.equal(code, 0);
  assert.deepEqual(message, { alive: false });
});
