// The label of the span an item queued behind is read again from the trace file once the second
// pass is over (the pass keeps where its begin's payload lies, not a copy of every candidate's): it
// is the begin's own label, and a file that lost those bytes since is a clear error, never a wrong
// or empty label.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { truncate } from 'node:fs/promises';
import { readTrace } from '../dist/index.js';
import { EventRoles } from '../dist/analysis/explain/event-roles.js';
import { SpanRelations } from '../dist/analysis/explain/span-relations.js';
import { app, at, begin, end, trace } from './helpers/explain-trace.mjs';

/** The second pass's span relations of one item, request 10 (200–1200 ms), after a skim of `file`. */
async function relationsOf(file) {
  const roles = new EventRoles();
  const item = { id: 10, parentId: 0, span: 'Test.App/Req', threadId: 0, startNs: at(200), endNs: at(1200) };
  const relations = new SpanRelations([item], roles.raw);
  await readTrace(file).skim((e, raw) => {
    const role = roles.of(e.type);
    if (role?.kind === 'span-begin') relations.begin(e, raw, role);
    else if (role?.kind === 'span-end') relations.end(e, raw, role);
  });
  relations.finish(at(1200));
  return { relations, item };
}

test('the span an item queued behind is named from its begin, read again from the file after the pass; a file cut since is a clear error', async (t) => {
  const events = [begin(app.Req, 8, 0, 100, '/short'), end(app.Req, 8, 190), begin(app.Req, 9, 0, 150, '/earlier'), begin(app.Req, 10, 0, 200, '/slow'), end(app.Req, 9, 1100), end(app.Req, 10, 1200)];
  const file = await trace(t, events);

  const { relations, item } = await relationsOf(file);
  await relations.nameLongestBefore(file);
  const { summary } = relations.concurrencyOf(item);
  assert.deepEqual({ running: summary.running, before: summary.before, label: summary.longestBefore.label, spanId: summary.longestBefore.spanId }, { running: 1, before: 1, label: '/earlier', spanId: '9' });

  const cut = await relationsOf(file);
  await truncate(file, 0);
  await assert.rejects(cut.relations.nameLongestBefore(file), (e) => e.code === 'io' && /changed while it was read: its bytes \d+-\d+ are gone/.test(e.message));
});
