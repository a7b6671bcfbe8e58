import { idHex } from './otlp-ids.js';
import { byScope } from './otlp-protobuf.js';
import type { DecodedFields } from '../format/payload-codec.js';
import type { FieldType } from '../schema/field-type.js';
import { forEachAttribute, type OtlpAttributes, type OtlpBatch, type OtlpLog, type OtlpMetric, type OtlpResource, type OtlpSpan, type OtlpTime } from './otlp-signals.js';

/** A double as OTLP/JSON has it: the protobuf JSON mapping spells the non-finite ones as strings. */
function double(v: number): number | string {
  return Number.isFinite(v) ? v : Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
}

function anyValue(type: FieldType, v: DecodedFields[string]): object {
  switch (type) {
    case 'bool': return { boolValue: v };
    case 'u8': case 'u16': case 'u32': case 'i8': case 'i16': case 'i32': return { intValue: String(v) };
    case 'u64': case 'i64': return { intValue: BigInt.asIntN(64, v as bigint).toString() };
    case 'f32': case 'f64': return { doubleValue: double(v as number) };
    case 'string': return { stringValue: v };
    case 'bytes': return { bytesValue: Buffer.from(v as Uint8Array).toString('base64') };
  }
}

function attributes(list: OtlpAttributes): object[] {
  const out: object[] = [];
  forEachAttribute(list, (key, type, value) => out.push({ key, value: anyValue(type, value) }));
  return out;
}

/** An item's time (ns from the batch's base) as OTLP/JSON writes unix ns: a decimal string. */
type UnixText = (t: OtlpTime) => string;

function span(s: OtlpSpan, unix: UnixText): object {
  return {
    traceId: idHex(s.traceId),
    spanId: idHex(s.spanId),
    ...(s.traceState !== '' ? { traceState: s.traceState } : {}),
    ...(s.parentSpanId ? { parentSpanId: idHex(s.parentSpanId) } : {}),
    name: s.name,
    kind: s.kind,
    startTimeUnixNano: unix(s.startNs),
    endTimeUnixNano: unix(s.endNs),
    attributes: attributes(s.attributes),
    events: s.events.map((e) => ({ timeUnixNano: unix(e.timeNs), name: e.name, attributes: attributes([e]) })),
    ...(s.droppedEvents > 0 ? { droppedEventsCount: s.droppedEvents } : {}),
    status: s.status.code === 0 ? {} : { code: s.status.code, ...(s.status.message ? { message: s.status.message } : {}) },
  };
}

function metric(m: OtlpMetric, unix: UnixText): object {
  const head = { name: m.name, ...(m.unit ? { unit: m.unit } : {}) };
  if (m.kind === 'gauge') {
    return { ...head, gauge: { dataPoints: m.points.map((p) => ({ timeUnixNano: unix(p.timeNs), asDouble: double(p.value), attributes: attributes(p.attributes) })) } };
  }
  return {
    ...head,
    histogram: {
      aggregationTemporality: 1,
      dataPoints: m.points.map((p) => ({
        attributes: attributes(p.attributes),
        startTimeUnixNano: unix(p.startNs),
        timeUnixNano: unix(p.timeNs),
        count: String(p.count),
        sum: double(p.sum),
        bucketCounts: p.bucketCounts.map(String),
        explicitBounds: p.bounds,
        min: double(p.min),
        max: double(p.max),
      })),
    },
  };
}

function log(l: OtlpLog, unix: UnixText): object {
  return {
    timeUnixNano: unix(l.timeNs),
    observedTimeUnixNano: unix(l.timeNs),
    severityNumber: l.severity,
    severityText: l.severityText,
    body: { stringValue: l.eventName },
    attributes: attributes(l.attributes),
    eventName: l.eventName,
  };
}

const KEYS = {
  traces: ['resourceSpans', 'scopeSpans', 'spans'],
  metrics: ['resourceMetrics', 'scopeMetrics', 'metrics'],
  logs: ['resourceLogs', 'scopeLogs', 'logRecords'],
} as const;

/** One export request in OTLP/JSON (the protobuf JSON mapping: hex ids, 64-bit integers as strings). */
export function otlpRequestJson(batch: OtlpBatch, resource: OtlpResource): string {
  const [resourceKey, scopeKey, itemsKey] = KEYS[batch.signal];
  const write = (batch.signal === 'traces' ? span : batch.signal === 'metrics' ? metric : log) as (item: unknown, unix: UnixText) => object;
  const unix: UnixText = (t) => (batch.unixBaseNs + BigInt(t)).toString();
  const scopes = [...byScope<{ scope: string }>(batch.items)].map(([name, items]) => ({ scope: { name }, [itemsKey]: items.map((item) => write(item, unix)) }));
  return JSON.stringify({ [resourceKey]: [{ resource: { attributes: attributes(resource.attributes) }, [scopeKey]: scopes }] });
}
