// Streaming, measured: a trace of more than 1,000,000 events converts to every format with the
// converting process's peak RSS (its own process.resourceUsage().maxRSS) under 200 MB.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { readTrace } from '../dist/index.js';
import { convertMeasured, richTrace } from './helpers/convert-helpers.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const LIMIT_MB = 200;

test(`a 1,000,000-event trace converts to every format in under ${LIMIT_MB} MB of peak RSS`, { timeout: 900_000 }, async (t) => {
  const dir = await tempDir(t);
  // A 64 MB buffer, so nearly nothing is dropped and the trace holds more than a million events.
  const { file } = await richTrace(dir, { perThread: 340_000, bufferMB: 64, name: 'million.tptrace' });
  const summary = await readTrace(file).summary();
  assert.ok(summary.events >= 1_000_000, `${summary.events} events`);
  for (const format of ['perfetto', 'chrome', 'ctf', 'jsonl', 'csv', 'parquet']) {
    const out = join(dir, `million-${format}`);
    const r = await convertMeasured([file, '--to', format, '-o', out], { timeoutMs: 600_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^converted ${summary.events.toLocaleString('en-US')} events`));
    t.diagnostic(`${format}: peak RSS ${r.maxRssMB.toFixed(0)} MB`);
    assert.ok(r.maxRssMB < LIMIT_MB, `${format}: peak RSS ${r.maxRssMB.toFixed(0)} MB`);
    await rm(out, { recursive: true, force: true });
  }
});
