// Issue 21, item 5: a dump of a full ring costs the process at most the ring's size again plus 16 MiB
// (it used to take about 4.5 times the ring: a copy of every chunk and an object per event), and
// stays a complete trace whose kept + lost events are what was written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { readTrace } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';

const FIXTURE = fileURLToPath(new URL('./fixtures/flight-dump-memory.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RING_MB = 64;
const skip = existsSync('/proc/self/clear_refs') ? false : "reads the kernel's peak RSS";

test(`a dump of a full ${RING_MB} MiB ring grows the process by at most the ring's size + 16 MiB`, { skip, timeout: 120_000 }, async (t) => {
  const file = join(await tempDir(t), 'ring.tptrace');
  const { stdout } = await promisify(execFile)(process.execPath, [FIXTURE, String(RING_MB), file], { cwd: ROOT, timeout: 100_000 });
  const r = JSON.parse(stdout.trim().split('\n').pop());
  assert.ok(r.growthMB <= RING_MB + 16, `the dump grew the process by ${r.growthMB.toFixed(1)} MiB`);
  const s = await readTrace(file).summary();
  assert.equal(s.complete, true);
  assert.equal(s.events, r.events);
  assert.ok(s.dropReasons.overwritten > 0, 'the ring wrapped');
  assert.equal(s.events + s.dropped, r.written, 'kept + lost = written');
});
