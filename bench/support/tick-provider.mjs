import { defineProvider, Level } from '../../dist/index.js';
import { align8, RECORD_HEADER_SIZE } from '../../dist/schema/record-abi.js';

/** The event every benchmark writes: four numeric fields, as in the issue (f64, f64, u32, i32). */
export const bench = defineProvider('Bench.App', {
  events: {
    Tick: { id: 1, level: Level.Verbose, fields: [['a', 'f64'], ['b', 'f64'], ['c', 'u32'], ['d', 'i32']] },
  },
});

export const PROVIDERS = 'Bench.App';

/** Bytes of one Tick payload (in a thread buffer and in the file). */
export const TICK_PAYLOAD_BYTES = bench.Tick.layout.fixedSize;
/** Bytes of one Tick record in a thread buffer: what a producer copies per event. */
export const TICK_RECORD_BYTES = align8(RECORD_HEADER_SIZE + TICK_PAYLOAD_BYTES);
