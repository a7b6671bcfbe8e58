// defineProvider's specs, session options and reader results are typed too.
import { defineProvider, Level, readTrace, startSession, type SessionResult, type TraceEvent, type TraceSummary } from 'tracepipe';

defineProvider('Types.Keywords', {
  keywords: { a: 1n },
  events: {
    // @ts-expect-error 'b' is not one of this provider's keywords
    E: { id: 1, keywords: ['b'] },
  },
});

defineProvider('Types.Fields', {
  events: {
    // @ts-expect-error 'u128' is not a field type
    E: { id: 1, fields: [['x', 'u128']] },
  },
});

defineProvider('Types.Level', {
  events: {
    // @ts-expect-error 9 is not a Level
    E: { id: 1, level: 9 },
  },
});

// @ts-expect-error keywords are 64-bit bigint masks
defineProvider('Types.KwNumber', { keywords: { a: 1 }, events: {} });

export async function sessions(): Promise<void> {
  const s = await startSession({ providers: 'Demo.App:0x1:4,Other', output: 'out.tptrace', bufferingMode: 'drop', bufferSizeMB: 64 });
  const r: SessionResult = await s.stop();
  const counts: number = r.eventsWritten + r.eventsDropped + r.bytesWritten;
  void counts;
  await startSession({
    providers: [{ name: 'Demo.App', keywords: 0x1n, level: Level.Verbose }],
    output: {
      onEvent(e: TraceEvent) {
        const t: number = e.timestampNs + e.threadId + e.sequence;
        void t;
      },
    },
  });
  // @ts-expect-error keywords in a provider list are bigint
  await startSession({ providers: [{ name: 'X', keywords: 1 }], output: 'x.tptrace' });
  // @ts-expect-error bufferingMode is 'drop', 'block' or 'ring'
  await startSession({ providers: 'X', output: 'x.tptrace', bufferingMode: 'fast' });
  // @ts-expect-error an output is required
  await startSession({ providers: 'X' });
  // @ts-expect-error a ring session has no output
  await startSession({ providers: 'X', bufferingMode: 'ring', output: 'x.tptrace' });
  const ring = await startSession({ providers: 'X', bufferingMode: 'ring' });
  const dumped: number = (await ring.dump('x.tptrace')).eventsWritten;
  void dumped;

  for await (const e of readTrace('x.tptrace')) {
    const name: string = `${e.provider}/${e.name}`;
    const value: boolean | number | bigint | string | Uint8Array | undefined = e.fields['route'];
    void [name, value];
  }
  const summary: TraceSummary = await readTrace('x.tptrace').summary();
  const n: number = summary.events + summary.dropped + (summary.byEvent['Demo.App/RequestStart'] ?? 0);
  const threads: number = Object.values(summary.threads).reduce((k, t) => k + t.events + t.dropped, 0);
  void [n, threads];
}
