// What a flight recorder's size gives: the events of a typical size (a 16-byte payload) it keeps,
// which startFlightRecorder reports, is what a full ring's dump holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { defineProvider, startFlightRecorder } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';

const app = defineProvider('Test.Capacity', { events: { Pair: { id: 1, fields: [['a', 'f64'], ['b', 'f64']] } } });

test('startFlightRecorder reports the events of a typical size its ring keeps, and a full ring dumps about that many', { timeout: 60_000 }, async (t) => {
  const dir = await tempDir(t);
  const rec = await startFlightRecorder({ providers: 'Test.Capacity', sizeMB: 1, dir, signal: false, dumpOnCrash: false });
  try {
    const { bytes, eventBytes, events } = rec.capacity;
    assert.ok(bytes > 0.9 * 1024 * 1024 && bytes <= 1024 * 1024, `the ring's bytes: ${bytes}`);
    // A record: 16 bytes of header (length, type, timestamp) and the payload, 8-byte aligned.
    assert.equal(eventBytes, 32);
    assert.ok(events > 0.9 * (bytes / eventBytes) && events <= bytes / eventBytes, `${events} events of ${eventBytes} B in ${bytes} B`);
    for (let i = 0; i < 3 * events; i++) app.Pair.write(i, -i);
    const out = join(dir, 'full.tptrace');
    const r = await rec.dump(out);
    // All but the chunk being written over (64 KiB: the oldest, taken for the newest events, which fill
    // it from its start), less the description of the type each chunk holds before its first event.
    const perChunk = Math.floor(65536 / eventBytes);
    assert.ok(r.eventsWritten <= events && r.eventsWritten > events - perChunk - 16, `dumped ${r.eventsWritten} of ${events}`);
    // The file keeps the same events in less: a 3-4 byte header instead of 16.
    const fileBytesPerEvent = (await stat(out)).size / r.eventsWritten;
    assert.ok(fileBytesPerEvent < 0.75 * eventBytes, `${fileBytesPerEvent.toFixed(1)} B per event in the file`);
    t.diagnostic(`1 MiB ring: ${events} events of ${eventBytes} B; dumped ${r.eventsWritten}, ${fileBytesPerEvent.toFixed(1)} B each in the file`);
  } finally {
    await rec.stop();
  }
});
