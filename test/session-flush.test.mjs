// A provider that holds events back (onFlush) gets them into a session that stops: after the other
// providers' rundown, so it still records what their rundown causes, and with or without rundown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defineProvider, startSession } from '../dist/index.js';

const calls = [];
let held = [];
const holder = defineProvider('Flush.Holder', {
  events: { Held: { id: 1, fields: [['n', 'u32']] } },
  onDisable: () => calls.push('holder.onDisable'),
  onFlush: () => {
    calls.push('holder.onFlush');
    for (const n of held) holder.Held.write(n);
    held = [];
  },
});
const other = defineProvider('Flush.Other', {
  events: { Rundown: { id: 1 } },
  onDisable: () => {
    calls.push('other.onDisable');
    // Something the rundown causes that the holder observes (as a GC would be).
    held.push(2);
    other.Rundown.write();
  },
});

for (const rundown of [true, false]) {
  test(`held events reach a stopping session (rundown ${rundown})`, async () => {
    const seen = [];
    const session = await startSession({ providers: 'Flush.Holder,Flush.Other', output: { onEvent: (e) => seen.push(e.name === 'Held' ? `Held ${e.fields.n}` : e.name) }, rundown });
    held = [1];
    calls.length = 0;
    await session.stop();
    if (rundown) {
      assert.deepEqual(calls, ['other.onDisable', 'holder.onDisable', 'holder.onFlush'], 'the holder is disabled last, then flushed');
      assert.deepEqual(seen.sort(), ['Held 1', 'Held 2', 'Rundown']);
    } else {
      // Without rundown, onDisable runs once the session no longer records: the flush comes first.
      assert.deepEqual(calls, ['holder.onFlush', 'holder.onDisable', 'other.onDisable']);
      assert.deepEqual(seen, ['Held 1']);
    }
  });
}
