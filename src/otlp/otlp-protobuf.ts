import { ProtobufWriter } from '../format/protobuf-writer.js';
import type { DecodedFields } from '../format/payload-codec.js';
import type { FieldType } from '../schema/field-type.js';
import { isSingleAttribute, type OtlpAttributes, type OtlpFieldAttributes, type OtlpBatch, type OtlpHistogramPoint, type OtlpLog, type OtlpMetric, type OtlpResource, type OtlpSpan, type OtlpTime } from './otlp-signals.js';

// Field numbers from opentelemetry-proto (opentelemetry/proto/{collector,common,resource,trace,metrics,logs}/v1).
const Request = { resource: 1 } as const;
const ResourceData = { resource: 1, scopes: 2 } as const;
const Resource = { attributes: 1 } as const;
const ScopeData = { scope: 1, items: 2 } as const;
const Scope = { name: 1 } as const;
const KeyValue = { key: 1, value: 2 } as const;
const AnyValue = { string: 1, bool: 2, int: 3, double: 4, bytes: 7 } as const;
const Span = {
  traceId: 1, spanId: 2, traceState: 3, parentSpanId: 4, name: 5, kind: 6, start: 7, end: 8, attributes: 9, events: 11, droppedEvents: 12, status: 15,
} as const;
const SpanEvent = { time: 1, name: 2, attributes: 3 } as const;
const Status = { message: 2, code: 3 } as const;
const Metric = { name: 1, unit: 3, gauge: 5, histogram: 9 } as const;
const Gauge = { points: 1 } as const;
const Histogram = { points: 1, temporality: 2, DELTA: 1 } as const;
const NumberPoint = { time: 3, asDouble: 4, attributes: 7 } as const;
const HistogramPoint = { start: 2, time: 3, count: 4, sum: 5, bucketCounts: 6, bounds: 7, attributes: 9, min: 11, max: 12 } as const;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const Log = { time: 1, severity: 2, severityText: 3, body: 5, attributes: 6, observedTime: 11, eventName: 12 } as const;

function anyValue(pb: ProtobufWriter, type: FieldType, v: DecodedFields[string]): void {
  switch (type) {
    case 'bool': return pb.bool(AnyValue.bool, v as boolean);
    case 'u8': case 'u16': case 'u32': case 'i8': case 'i16': case 'i32': return pb.int(AnyValue.int, v as number);
    // Most 64-bit values (span ids, byte counts) are small and non-negative: their varint is a number's.
    case 'u64': case 'i64': return (v as bigint) >= 0n && (v as bigint) <= MAX_SAFE ? pb.uint(AnyValue.int, Number(v)) : pb.bigint(AnyValue.int, BigInt.asIntN(64, v as bigint));
    case 'f32': case 'f64': return pb.double(AnyValue.double, v as number);
    case 'string': return pb.str(AnyValue.string, v as string);
    case 'bytes': return pb.blob(AnyValue.bytes, v as Uint8Array);
  }
}

function keyValue(pb: ProtobufWriter, field: number, key: string, type: FieldType, value: DecodedFields[string]): void {
  pb.begin(field);
  pb.str(KeyValue.key, key);
  pb.begin(KeyValue.value);
  anyValue(pb, type, value);
  pb.end();
  pb.end();
}

function fieldAttributes(pb: ProtobufWriter, field: number, a: OtlpFieldAttributes): void {
  for (let i = 0; i < a.keys.length; i++) keyValue(pb, field, a.keys[i]!, a.fields[i]![1], a.values[a.fields[i]![0]]!);
}

/** As forEachAttribute walks them, without a closure per list (the encoder's hot path). */
function attributes(pb: ProtobufWriter, field: number, list: OtlpAttributes): void {
  for (const a of list) {
    if (isSingleAttribute(a)) keyValue(pb, field, a[0], a[1], a[2]);
    else fieldAttributes(pb, field, a);
  }
}

/** A batch's base unix time (its items' times are ns from it) in 32-bit halves, added to each time without a bigint. */
interface UnixBase {
  readonly hi: number;
  readonly lo: number;
}

function unixBase(ns: bigint): UnixBase {
  return { hi: Number(ns >> 32n), lo: Number(ns & 0xffffffffn) };
}

/** A fixed64 unix-ns time field. */
function time(pb: ProtobufWriter, field: number, base: UnixBase, t: OtlpTime): void {
  pb.fixed64Sum(field, base.hi, base.lo, t);
}

function span(pb: ProtobufWriter, s: OtlpSpan, base: UnixBase): void {
  pb.blob(Span.traceId, s.traceId);
  pb.blob(Span.spanId, s.spanId);
  if (s.traceState !== '') pb.str(Span.traceState, s.traceState);
  if (s.parentSpanId) pb.blob(Span.parentSpanId, s.parentSpanId);
  pb.str(Span.name, s.name);
  pb.uint(Span.kind, s.kind);
  time(pb, Span.start, base, s.startNs);
  time(pb, Span.end, base, s.endNs);
  attributes(pb, Span.attributes, s.attributes);
  for (const e of s.events) {
    pb.begin(Span.events);
    time(pb, SpanEvent.time, base, e.timeNs);
    pb.str(SpanEvent.name, e.name);
    fieldAttributes(pb, SpanEvent.attributes, e);
    pb.end();
  }
  if (s.droppedEvents > 0) pb.uint(Span.droppedEvents, s.droppedEvents);
  if (s.status.code !== 0) {
    pb.begin(Span.status);
    if (s.status.message) pb.str(Status.message, s.status.message);
    pb.uint(Status.code, s.status.code);
    pb.end();
  }
}

function histogramPoint(pb: ProtobufWriter, p: OtlpHistogramPoint, base: UnixBase): void {
  attributes(pb, HistogramPoint.attributes, p.attributes);
  time(pb, HistogramPoint.start, base, p.startNs);
  time(pb, HistogramPoint.time, base, p.timeNs);
  pb.fixed64(HistogramPoint.count, BigInt(p.count));
  pb.double(HistogramPoint.sum, p.sum);
  pb.begin(HistogramPoint.bucketCounts);
  for (const c of p.bucketCounts) pb.u64(BigInt(c));
  pb.end();
  pb.begin(HistogramPoint.bounds);
  for (const b of p.bounds) pb.f64(b);
  pb.end();
  pb.double(HistogramPoint.min, p.min);
  pb.double(HistogramPoint.max, p.max);
}

function metric(pb: ProtobufWriter, m: OtlpMetric, base: UnixBase): void {
  pb.str(Metric.name, m.name);
  if (m.unit) pb.str(Metric.unit, m.unit);
  if (m.kind === 'gauge') {
    pb.begin(Metric.gauge);
    for (const p of m.points) {
      pb.begin(Gauge.points);
      time(pb, NumberPoint.time, base, p.timeNs);
      pb.double(NumberPoint.asDouble, p.value);
      attributes(pb, NumberPoint.attributes, p.attributes);
      pb.end();
    }
  } else {
    pb.begin(Metric.histogram);
    for (const p of m.points) {
      pb.begin(Histogram.points);
      histogramPoint(pb, p, base);
      pb.end();
    }
    pb.uint(Histogram.temporality, Histogram.DELTA);
  }
  pb.end();
}

function log(pb: ProtobufWriter, l: OtlpLog, base: UnixBase): void {
  time(pb, Log.time, base, l.timeNs);
  time(pb, Log.observedTime, base, l.timeNs);
  pb.uint(Log.severity, l.severity);
  pb.str(Log.severityText, l.severityText);
  // The event's name is the body too: collectors older than event_name (proto 1.5) show that.
  pb.begin(Log.body);
  pb.str(AnyValue.string, l.eventName);
  pb.end();
  attributes(pb, Log.attributes, l.attributes);
  pb.str(Log.eventName, l.eventName);
}

/** Items grouped by instrumentation scope (a provider), in the order each scope first appears. */
export function byScope<T extends { readonly scope: string }>(items: readonly T[]): Map<string, T[]> {
  const scopes = new Map<string, T[]>();
  for (const item of items) {
    let list = scopes.get(item.scope);
    if (!list) scopes.set(item.scope, (list = []));
    list.push(item);
  }
  return scopes;
}

/**
 * One ExportTraceServiceRequest, ExportMetricsServiceRequest or ExportLogsServiceRequest (the three
 * have the same shape: resource, then per scope its items) appended to `pb`, without a length.
 */
export function writeOtlpRequest(pb: ProtobufWriter, batch: OtlpBatch, resource: OtlpResource): void {
  pb.begin(Request.resource);
  pb.begin(ResourceData.resource);
  attributes(pb, Resource.attributes, resource.attributes);
  pb.end();
  const write = (batch.signal === 'traces' ? span : batch.signal === 'metrics' ? metric : log) as (pb: ProtobufWriter, item: unknown, base: UnixBase) => void;
  const base = unixBase(batch.unixBaseNs);
  for (const [name, items] of byScope<{ scope: string }>(batch.items)) {
    pb.begin(ResourceData.scopes);
    pb.begin(ScopeData.scope);
    pb.str(Scope.name, name);
    pb.end();
    for (const item of items) {
      pb.begin(ScopeData.items);
      write(pb, item, base);
      pb.end();
    }
    pb.end();
  }
  pb.end();
}

/** A request as bytes of its own (an HTTP body). */
export function otlpRequestBytes(batch: OtlpBatch, resource: OtlpResource, pb = new ProtobufWriter()): Uint8Array {
  pb.clear();
  writeOtlpRequest(pb, batch, resource);
  return pb.take();
}
