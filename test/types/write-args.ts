// write(...) is positional and typed by the event's fields: wrong arity or a wrong type does not compile.
import { defineProvider, Level } from 'tracepipe';

const app = defineProvider('Types.App', {
  keywords: { requests: 0x1n, db: 0x2n },
  events: {
    RequestStart: { id: 1, level: Level.Informational, keywords: ['requests'], fields: [['route', 'string'], ['bytes', 'u32']] },
    Tick: { id: 2, level: Level.Verbose, fields: [['a', 'f64'], ['b', 'f64'], ['c', 'u32'], ['d', 'i32']] },
    Wide: { id: 3, fields: [['n', 'u64'], ['m', 'i64'], ['ok', 'bool'], ['raw', 'bytes'], ['f', 'f32'], ['s', 'i8']] },
    Empty: { id: 4 },
  },
});

// Correct usages compile.
if (app.Tick.enabled) app.Tick.write(1.5, 2.5, 3, -4);
app.RequestStart.write('/x', 12);
app.Wide.write(1, 2n, true, new Uint8Array(2), 0.5, -1);
app.Wide.write(2n ** 64n - 1n, -1, false, Uint8Array.of(1), 1, 1);
app.Empty.write();
app.Tick.writeAt(performance.now(), 1, 2, 3, 4);
const enabled: boolean = app.Tick.enabled;
const level: Level = app.Tick.level;
const keywords: bigint = app.RequestStart.keywords;
const skip: boolean = app.isEnabled() || app.isEnabled(Level.Warning) || app.isEnabled(Level.Warning, ['requests', 'db']);
void [enabled, level, keywords, skip];

// Wrong arity.
// @ts-expect-error one argument short
app.Tick.write(1.5, 2.5, 3);
// @ts-expect-error one argument too many
app.Tick.write(1.5, 2.5, 3, -4, 5);
// @ts-expect-error no arguments for two fields
app.RequestStart.write();
// @ts-expect-error an event without fields takes no arguments
app.Empty.write(1);
// @ts-expect-error writeAt takes the timestamp first, then every field
app.Tick.writeAt(1, 2, 3, 4);

// Wrong field types.
// @ts-expect-error string field given a number
app.RequestStart.write(42, 12);
// @ts-expect-error u32 field given a string
app.RequestStart.write('/x', '12');
// @ts-expect-error u32 field given a bigint (only u64/i64 take bigint)
app.Tick.write(1, 2, 3n, 4);
// @ts-expect-error u64 field given a string
app.Wide.write('1', 2, true, new Uint8Array(0), 0, 0);
// @ts-expect-error bool field given a number
app.Wide.write(1, 2, 1, new Uint8Array(0), 0, 0);
// @ts-expect-error bytes field given a plain array
app.Wide.write(1, 2, true, [1, 2], 0, 0);
// @ts-expect-error f32 field given a boolean
app.Wide.write(1, 2, true, new Uint8Array(0), false, 0);

// The descriptor is read-only, and only declared events exist.
// @ts-expect-error enabled is recomputed by sessions, not set by callers
app.Tick.enabled = true;
// @ts-expect-error no such event
void app.RequestStop;
