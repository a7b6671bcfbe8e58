import { RawPayloads } from '../format/raw-payloads.js';
import type { TraceHeader } from '../format/stream-header.js';
import { TraceParser } from '../format/trace-parser.js';
import type { OtlpSignals } from './otlp-signals.js';

/**
 * The stream as the live export reads it: the parser hands on one event object rewritten for each
 * event (TraceParser's `fields` false) and each event's fields are decoded from its payload bytes
 * (RawPayloads, checked as a reader checks them) straight into OtlpSignals, which keeps the fields
 * and nothing of the event: no object per event, three a span of a served request.
 * `signalsFor` makes the OtlpSignals once the stream's header has come.
 */
export function otlpStreamParser(signalsFor: (h: TraceHeader) => OtlpSignals): TraceParser {
  const payloads = new RawPayloads();
  let signals: OtlpSignals | undefined;
  return new TraceParser(
    {
      header: (h) => {
        signals = signalsFor(h);
      },
      event: (e, p) => signals!.event(e, payloads.decode(e.type, p)),
    },
    false,
  );
}
