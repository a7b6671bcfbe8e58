// What a flight recorder's size keeps: a 16 MiB ring filled three times over with events of one u32
// field, then with events of two f64 fields (a 16-byte payload: the "typical" size the recorder
// reports its capacity in), each dumped; the events kept, the dump's size, and the ring's bytes per
// file byte. Deterministic (no timing): one run says it.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineProvider, startFlightRecorder } from '../dist/index.js';
import { row } from './support/report.mjs';

const SIZE_MB = 16;

export const description = `what a ${SIZE_MB} MiB flight recorder keeps: events of a 4- and a 16-byte payload, the dump's size, the ring's layout overhead`;

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'tracepipe-ring-capacity-'));
  const p = defineProvider('Bench.Ring', { events: { Small: { id: 1, fields: [['i', 'u32']] }, Pair: { id: 2, fields: [['a', 'f64'], ['b', 'f64']] } } });
  const checks = [];
  try {
    for (const [name, payload, write] of [['one u32 field', 4, (i) => p.Small.write(i)], ['two f64 fields', 16, (i) => p.Pair.write(i, -i)]]) {
      const rec = await startFlightRecorder({ providers: 'Bench.Ring', sizeMB: SIZE_MB, dir, signal: false, dumpOnCrash: false });
      const { bytes, events, eventBytes } = rec.capacity;
      for (let i = 0; i < 3 * events * (32 / 24); i++) write(i);
      const out = join(dir, `${payload}.tptrace`);
      const r = await rec.dump(out);
      await rec.stop();
      const size = statSync(out).size;
      row(`${name} (${payload}-byte payload): kept`, `${r.eventsWritten.toLocaleString('en-US')} events`);
      row(`  dump`, `${(size / 1e6).toFixed(1)} MB, ${(size / r.eventsWritten).toFixed(2)} B per event`);
      row(`  ring bytes / dump bytes`, `${(bytes / size).toFixed(2)}×`);
      if (payload === 16) row(`  rec.capacity`, `${events.toLocaleString('en-US')} events of ${eventBytes} B in ${bytes.toLocaleString('en-US')} B`);
      checks.push({ check: `${SIZE_MB} MiB flight recorder, events of ${name}`, value: `${r.eventsWritten.toLocaleString('en-US')} kept, ${(bytes / size).toFixed(2)}× the dump's size`, met: null });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return checks;
}
