import { defineProvider, Level } from '../index.js';

/** The sample application's events, declared once and shared by its main thread and workers. */
export const demoApp = defineProvider('Demo.App', {
  keywords: { requests: 0x1n, db: 0x2n },
  events: {
    RequestStart: { id: 1, level: Level.Informational, keywords: ['requests'], fields: [['route', 'string'], ['bytes', 'u32']] },
    RequestStop: { id: 2, level: Level.Informational, keywords: ['requests'], fields: [['route', 'string'], ['status', 'u16'], ['durationMs', 'f64']] },
    Query: { id: 3, level: Level.Verbose, keywords: ['db'], fields: [['table', 'string'], ['rows', 'u32'], ['durationMs', 'f64']] },
    Tick: { id: 4, level: Level.Verbose, fields: [['a', 'f64'], ['b', 'f64'], ['c', 'u32'], ['d', 'i32']] },
  },
});
