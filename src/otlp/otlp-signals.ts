import type { BlockEvent } from '../format/events-block.js';
import type { DecodedFields } from '../format/payload-codec.js';
import type { TraceHeader } from '../format/stream-header.js';
import type { PlacedDrop } from '../format/trace-reader.js';
import type { StreamEventType } from '../format/trace-event.js';
import type { FieldType } from '../schema/field-type.js';
import { Level } from '../schema/level.js';
import { SPAN_BEGIN_FIELDS, SPAN_END_FIELDS } from '../schema/type-role.js';
import { OldestEntry } from '../format/oldest-entry.js';
import { processLabel } from '../format/stream-header.js';
import { counterFields, counterGroup, timelineRole, type TimelineRole, typeHasFields } from '../format/timeline-role.js';
import { EndedSpans } from './ended-spans.js';
import { OtlpIds } from './otlp-ids.js';

/** An attribute: key, the trace field type its value has (it picks the OTLP value kind), value. */
export type OtlpAttribute = readonly [string, FieldType, DecodedFields[string]];

/**
 * An event's fields as attributes, read from the decoded fields when encoded: key `keys[i]`, type
 * and value of field `fields[i]`. One object per event instead of an array per field.
 */
export interface OtlpFieldAttributes {
  readonly keys: readonly string[];
  readonly fields: ReadonlyArray<readonly [string, FieldType]>;
  readonly values: DecodedFields;
}

/** Attributes in order: single ones and runs of an event's fields. */
export type OtlpAttributes = ReadonlyArray<OtlpAttribute | OtlpFieldAttributes>;

/** Calls `each` with every attribute of `list`, in order. */
export function forEachAttribute(list: OtlpAttributes, each: (key: string, type: FieldType, value: DecodedFields[string]) => void): void {
  for (const a of list) {
    if (isSingleAttribute(a)) each(a[0], a[1], a[2]);
    else for (let i = 0; i < a.keys.length; i++) each(a.keys[i]!, a.fields[i]![1], a.values[a.fields[i]![0]]!);
  }
}

export const isSingleAttribute = (a: OtlpAttribute | OtlpFieldAttributes): a is OtlpAttribute => Array.isArray(a);

export const SpanKind = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;
export const StatusCode = { UNSET: 0, ERROR: 2 } as const;

/**
 * A time as items hold it: integer ns of the trace's clock, the unix time being the batch's
 * `unixBaseNs` plus this (a number: a bigint per time was a good part of a span's cost).
 */
export type OtlpTime = number;

/** An event inside a span: its time, its name, and its fields as its attributes (one object per event). */
export interface OtlpSpanEvent extends OtlpFieldAttributes {
  readonly timeNs: OtlpTime;
  readonly name: string;
}

export interface OtlpSpan {
  readonly scope: string;
  readonly traceId: Uint8Array;
  readonly spanId: Uint8Array;
  /** The W3C tracestate the span's trace came with ('' for none). */
  readonly traceState: string;
  /** Undefined for a root span. */
  readonly parentSpanId: Uint8Array | undefined;
  readonly name: string;
  readonly kind: number;
  readonly startNs: OtlpTime;
  readonly endNs: OtlpTime;
  readonly attributes: OtlpAttributes;
  readonly events: readonly OtlpSpanEvent[];
  readonly droppedEvents: number;
  readonly status: { readonly code: number; readonly message: string };
}

export interface OtlpLog {
  readonly scope: string;
  readonly timeNs: OtlpTime;
  readonly severity: number;
  readonly severityText: string;
  readonly eventName: string;
  readonly attributes: OtlpAttributes;
}

export interface OtlpGaugePoint {
  readonly timeNs: OtlpTime;
  readonly value: number;
  readonly attributes: readonly OtlpAttribute[];
}

export interface OtlpHistogramPoint {
  readonly startNs: OtlpTime;
  readonly timeNs: OtlpTime;
  readonly attributes: readonly OtlpAttribute[];
  readonly count: number;
  readonly sum: number;
  readonly min: number;
  readonly max: number;
  /** One more than the bounds: the last counts values above the last bound. */
  readonly bucketCounts: readonly number[];
  readonly bounds: readonly number[];
}

export type OtlpMetric =
  | { readonly scope: string; readonly name: string; readonly unit: string; readonly kind: 'gauge'; readonly points: OtlpGaugePoint[] }
  | { readonly scope: string; readonly name: string; readonly unit: string; readonly kind: 'histogram'; readonly points: OtlpHistogramPoint[] };

/** One export request's worth of one signal (OTLP's three services); its items' times are ns from `unixBaseNs`. */
export type OtlpBatch = { readonly unixBaseNs: bigint } & (
  | { readonly signal: 'traces'; readonly items: readonly OtlpSpan[] }
  | { readonly signal: 'metrics'; readonly items: readonly OtlpMetric[] }
  | { readonly signal: 'logs'; readonly items: readonly OtlpLog[] }
);

/** What every request says of where its data comes from. */
export interface OtlpResource {
  readonly attributes: readonly OtlpAttribute[];
}

export interface OtlpResourceOptions {
  /** OpenTelemetry's service.name; default `unknown_service:<script>`. */
  readonly serviceName?: string;
  /** More resource attributes (strings). */
  readonly resource?: Readonly<Record<string, string>>;
}

export function otlpResource(h: TraceHeader, o: OtlpResourceOptions): OtlpResource {
  const attributes: OtlpAttribute[] = [
    ['service.name', 'string', o.serviceName ?? `unknown_service:${processLabel(h).split(' ')[0]}`],
    ['process.pid', 'u32', h.pid],
    ['process.runtime.name', 'string', 'nodejs'],
    ['process.runtime.version', 'string', h.nodeVersion.replace(/^v/, '')],
    ['host.name', 'string', h.hostname],
    ['host.arch', 'string', h.arch],
    ['os.type', 'string', h.platform],
    ['telemetry.sdk.name', 'string', 'tracepipe'],
    ['telemetry.sdk.language', 'string', 'nodejs'],
    ['telemetry.sdk.version', 'string', h.tracepipeVersion],
  ];
  for (const [k, v] of Object.entries(o.resource ?? {})) {
    const at = attributes.findIndex(([key]) => key === k);
    if (at >= 0) attributes.splice(at, 1);
    attributes.push([k, 'string', v]);
  }
  return { attributes };
}

/** Log records or metric points in one request at most: a collector's default limit on a request is 4 MiB. */
export const MAX_BATCH_ITEMS = 512;
/**
 * Spans in one request at most: a span of a served request is about 320 bytes of protobuf (0.7 MiB
 * for these), and large requests keep the sender's cost per span low: each post costs about as much
 * CPU whatever its size (BENCHMARKS.md §33.2).
 */
export const MAX_BATCH_SPANS = 2048;
/** Spans kept open at most, and ended spans remembered as parents: memory stays bounded whatever the trace. */
const MAX_OPEN_SPANS = 65_536;
/** Span events kept per span at most; past that they are counted as dropped (OTLP's dropped_events_count). */
const MAX_SPAN_EVENTS = 128;
/** GC pause buckets, in ms: from a young-generation scavenge to a long full collection. */
const GC_PAUSE_BOUNDS_MS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000];

/** Spans whose kind OpenTelemetry names: the server and client requests Node.Channels records. */
const SPAN_KINDS: Readonly<Record<string, number>> = {
  'Node.Channels/HttpServer': SpanKind.SERVER,
  'Node.Channels/HttpClient': SpanKind.CLIENT,
  'Node.Channels/Fetch': SpanKind.CLIENT,
};

const SEVERITY: Readonly<Record<number, [number, string]>> = {
  [Level.LogAlways]: [9, 'INFO'],
  [Level.Critical]: [21, 'FATAL'],
  [Level.Error]: [17, 'ERROR'],
  [Level.Warning]: [13, 'WARN'],
  [Level.Informational]: [9, 'INFO'],
  [Level.Verbose]: [5, 'DEBUG'],
};

interface OpenSpan {
  /** What is kept of the begin event (handed on valid during its call only). */
  readonly type: StreamEventType;
  readonly threadId: number;
  readonly startNs: number;
  readonly fields: DecodedFields;
  /** The span id as the trace holds it (a bigint), for its tracepipe.span_id attribute. */
  readonly rawId: bigint;
  /** The trace's and the parent's, unless a caller's W3C context replaces them (adopt). */
  traceId: Uint8Array;
  readonly spanId: Uint8Array;
  parentSpanId: Uint8Array | undefined;
  traceState: string;
  /** NO_EVENTS until the first: most spans have none. */
  events: OtlpSpanEvent[];
  droppedEvents: number;
}

interface TypeView {
  readonly role: TimelineRole;
  /** Node.Channels' TraceContext: the W3C context a served request came with. */
  readonly traceContext: boolean;
  readonly attributes: ReadonlyArray<readonly [string, FieldType]>;
  /** The attributes' keys: their fields' names. */
  readonly keys: readonly string[];
  readonly counters: ReadonlyArray<readonly [string, string]>;
  /** A span's begin: its name, its OTLP kind, and per end type the names its end's fields take. */
  readonly spanName: string;
  readonly spanKind: number;
  readonly endNames: Map<StreamEventType, readonly string[]>;
}


/**
 * A span id as a map key: a number, as every id a process writes is (below 2^53), so maps hash a
 * small integer, not a bigint; a larger one (a foreign trace) stays a bigint, so no two ids meet.
 */
export type SpanKey = number | bigint;
const MAX_NUMBER_ID = BigInt(Number.MAX_SAFE_INTEGER);
const spanKey = (id: bigint): SpanKey => (id <= MAX_NUMBER_ID ? Number(id) : id);

/** A served request's W3C context, as Node.Channels writes it (providers/trace-context.ts). */
const isTraceContextType = (t: StreamEventType): boolean =>
  t.key === 'Node.Channels/TraceContext' && typeHasFields(t, { spanId: ['u64'], traceId: ['string'], parentId: ['string'], traceState: ['string'] });
const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const ZERO_ID = /^0+$/;

const NO_STATUS = { code: StatusCode.UNSET, message: '' } as const;
/** The events of a span that has none: shared, never added to (OpenSpan.events is replaced first). */
const NO_EVENTS: OtlpSpanEvent[] = [];

const BEGIN_ID_FIELDS = new Set(SPAN_BEGIN_FIELDS.map(([n]) => n));
const END_ID_FIELDS = new Set(SPAN_END_FIELDS.map(([n]) => n));

const fieldAttributes = (values: DecodedFields, v: TypeView): OtlpFieldAttributes => ({ keys: v.keys, fields: v.attributes, values });

/**
 * A trace's events as OpenTelemetry's three signals, in stream order with bounded memory: spans
 * (a `.Begin` and its `.End` paired by span id: the begin's fields and the end's as attributes, the
 * end's error as an error status, the other events of its thread while it is the innermost open span
 * there as span events), metrics (declared counters and the runtime's heap and loop figures as
 * gauges, GC pauses as a histogram by kind, drops as a sum) and logs (every other event, with its
 * fields as attributes). `emit` gets each request's worth as it fills (MAX_BATCH_SPANS,
 * MAX_BATCH_ITEMS), and what is left on flush(); ids come from OtlpIds, so the same trace always
 * gives the same requests.
 */
export class OtlpSignals {
  private readonly ids: OtlpIds;
  private readonly wallNs: bigint;
  private readonly open = new Map<SpanKey, OpenSpan>();
  private readonly oldestOpen = new OldestEntry(this.open);
  /** Per thread, the spans begun there and still open, innermost last. */
  private readonly openByThread = new Map<number, OpenSpan[]>();
  /** The traces of spans ended, for children that begin after their parent ended. */
  private readonly ended = new EndedSpans();
  private readonly views = new Map<StreamEventType, TypeView>();
  private readonly threadAttributes = new Map<number, OtlpAttribute>();
  private spans: OtlpSpan[] = [];
  private logs: OtlpLog[] = [];
  private gauges = new Map<string, OtlpMetric & { kind: 'gauge' }>();
  private gaugePoints = 0;
  private readonly gcPauses = new Map<string, { count: number; sum: number; min: number; max: number; buckets: number[] }>();
  /** Where the current GC histogram interval began (trace ns) and the latest time seen. */
  private intervalStartNs: number | undefined;
  private lastNs = 0;
  private droppedEvents = 0;

  constructor(
    header: TraceHeader,
    private readonly emit: (batch: OtlpBatch) => void,
  ) {
    this.ids = OtlpIds.forHeader(header);
    this.wallNs = BigInt(header.clock.wallClockNs);
  }

  /** A trace time as items hold it (OtlpTime). */
  private time(traceNs: number): OtlpTime {
    return Math.round(traceNs);
  }

  /**
   * One event of the stream, and its fields: `e` may be an object rewritten for each event (a
   * parser that does not decode, TraceParser's `fields` false), so nothing of it is kept past the
   * call; its fields are (they default to the event's own).
   */
  event(e: BlockEvent, fields: DecodedFields = e.fields): void {
    if (e.timestampNs > this.lastNs) this.lastNs = e.timestampNs;
    this.intervalStartNs ??= e.timestampNs;
    const v = this.viewOf(e.type);
    if (v.traceContext && this.adopt(fields)) return;
    switch (v.role) {
      case 'span-begin':
        return this.begin(e, fields);
      case 'span-end':
        if (!this.end(e, fields)) this.log(e, fields, v);
        return;
      case 'gc-pause':
        return this.gcPause(fields);
      case 'counter':
        return this.counter(e, fields, v);
      case 'cpu-sample':
        // A CPU profile is no signal of OTLP's: convert --to speedscope or perfetto carries it.
        return;
      default:
        return this.log(e, fields, v);
    }
  }

  /** Events a trace lost: the running total as a gauge, per thread that lost them, so the loss shows beside the data. */
  drop(d: PlacedDrop): void {
    this.droppedEvents += d.count;
    const name = 'tracepipe.dropped_events';
    let m = this.gauges.get(name);
    if (!m) this.gauges.set(name, (m = { scope: 'tracepipe', name, unit: '{event}', kind: 'gauge', points: [] }));
    m.points.push({ timeNs: this.time(d.timestampNs), value: this.droppedEvents, attributes: [['thread.id', 'u32', d.threadId]] });
    this.addedPoint();
  }

  private viewOf(t: StreamEventType): TypeView {
    let v = this.views.get(t);
    if (!v) {
      const role = timelineRole(t);
      const skip = role === 'span-begin' ? BEGIN_ID_FIELDS : role === 'span-end' ? END_ID_FIELDS : new Set<string>();
      const attributes = t.layout.fields.filter((f) => !skip.has(f.name)).map((f) => [f.name, f.type] as const);
      const counters = role === 'counter' ? counterFields(t).map((f) => [f.name, f.type] as const) : [];
      const spanName = role === 'span-begin' ? t.descriptor.name.slice(0, -'.Begin'.length) : '';
      const spanKind = SPAN_KINDS[t.key.slice(0, -'.Begin'.length)] ?? SpanKind.INTERNAL;
      v = { role, traceContext: isTraceContextType(t), attributes, keys: attributes.map(([name]) => name), counters, spanName, spanKind, endNames: new Map() };
      this.views.set(t, v);
    }
    return v;
  }

  private begin(e: BlockEvent, fields: DecodedFields): void {
    const rawId = fields.spanId as bigint;
    const rawParent = fields.parentSpanId as bigint;
    const id = spanKey(rawId);
    const parent = spanKey(rawParent);
    const reused = this.open.get(id);
    if (reused) this.close(id, reused, e.timestampNs);
    if (this.open.size >= MAX_OPEN_SPANS) {
      const [oldId, oldest] = this.oldestOpen.take()!;
      this.close(oldId, oldest, this.lastNs);
    }
    // A parent still known gives its trace and its own W3C span id: neither is derived again.
    let traceId: Uint8Array;
    let traceState = '';
    let parentSpanId: Uint8Array | undefined;
    const openParent = parent === 0 ? undefined : this.open.get(parent);
    const endedParent = parent === 0 || openParent ? -1 : this.ended.find(parent);
    if (openParent) {
      traceId = openParent.traceId;
      traceState = openParent.traceState;
      parentSpanId = openParent.spanId;
    } else if (endedParent >= 0) {
      traceId = this.ended.traceId(endedParent);
      traceState = this.ended.traceState(endedParent);
      parentSpanId = this.ended.spanId(endedParent);
    } else {
      // From the keys: numbers, as nearly every id is, derive without bigint arithmetic.
      traceId = this.ids.traceId(parent === 0 ? id : parent);
      parentSpanId = parent === 0 ? undefined : this.ids.spanId(parent);
    }
    const span: OpenSpan = { type: e.type, threadId: e.threadId, startNs: e.timestampNs, fields, rawId, traceId, traceState, spanId: this.ids.spanId(id), parentSpanId, events: NO_EVENTS, droppedEvents: 0 };
    this.open.set(id, span);
    let stack = this.openByThread.get(e.threadId);
    if (!stack) this.openByThread.set(e.threadId, (stack = []));
    stack.push(span);
  }

  /**
   * A served request's caller context: its span takes the caller's trace id and has the caller's span
   * as parent, and so every span begun under it has that trace id. Written as the span begins, before
   * anything begins under it. False (the event is then a log record) for a span not open or bad ids.
   */
  private adopt(fields: DecodedFields): boolean {
    const s = this.open.get(spanKey(fields.spanId as bigint));
    const traceId = String(fields.traceId);
    const parentId = String(fields.parentId);
    if (!s || !TRACE_ID.test(traceId) || !SPAN_ID.test(parentId) || ZERO_ID.test(traceId) || ZERO_ID.test(parentId)) return false;
    s.traceId = Buffer.from(traceId, 'hex');
    s.parentSpanId = Buffer.from(parentId, 'hex');
    s.traceState = String(fields.traceState);
    return true;
  }

  private end(e: BlockEvent, fields: DecodedFields): boolean {
    const id = spanKey(fields.spanId as bigint);
    const s = this.open.get(id);
    if (!s) return false;
    this.close(id, s, e.timestampNs, e.type, fields);
    return true;
  }

  /** Ends span `s` at `endNs`; with its end event's type and fields, or none for a span left unfinished. */
  private close(id: SpanKey, s: OpenSpan, endNs: number, endType?: StreamEventType, endFields?: DecodedFields): void {
    this.open.delete(id);
    const stack = this.openByThread.get(s.threadId)!;
    // Spans nearly always end innermost first: a pop, not a splice and the array it returns.
    if (stack[stack.length - 1] === s) stack.pop();
    else {
      const at = stack.lastIndexOf(s);
      if (at >= 0) stack.splice(at, 1);
    }
    this.ended.remember(id, s.traceId, s.traceState, s.spanId);

    const bv = this.viewOf(s.type);
    // The trace's own span id, to find the span in the trace file (dump, query).
    const attributes: Array<OtlpAttribute | OtlpFieldAttributes> = [fieldAttributes(s.fields, bv), this.threadAttribute(s.threadId), ['tracepipe.span_id', 'u64', s.rawId]];
    let status: OtlpSpan['status'] = NO_STATUS;
    if (endType && endFields) {
      const ev = this.viewOf(endType);
      attributes.push({ keys: bv.endNames.get(endType) ?? this.endNames(bv, endType, ev), fields: ev.attributes, values: endFields });
      if (endFields.error === true) status = { code: StatusCode.ERROR, message: String(endFields.errorName) };
    } else attributes.push(['tracepipe.unfinished', 'bool', true]);
    this.spans.push({
      scope: s.type.descriptor.provider,
      traceId: s.traceId,
      spanId: s.spanId,
      traceState: s.traceState,
      parentSpanId: s.parentSpanId,
      name: bv.spanName,
      kind: bv.spanKind,
      startNs: this.time(s.startNs),
      endNs: this.time(Math.max(endNs, s.startNs)),
      attributes,
      events: s.events,
      droppedEvents: s.droppedEvents,
      status,
    });
    if (this.spans.length >= MAX_BATCH_SPANS) this.flushSpans();
  }

  /** A thread's thread.id attribute, made once per thread (a trace has few) and shared by its items. */
  private threadAttribute(threadId: number): OtlpAttribute {
    let a = this.threadAttributes.get(threadId);
    if (!a) this.threadAttributes.set(threadId, (a = ['thread.id', 'u32', threadId]));
    return a;
  }

  /**
   * The names an end's fields take among a span's attributes (those of its begin and the two the
   * span adds): the field's own, or `end.NAME` where the begin has it. Made once per pair of types.
   */
  private endNames(bv: TypeView, endType: StreamEventType, ev: TypeView): readonly string[] {
    const taken = new Set([...bv.keys, 'thread.id', 'tracepipe.span_id']);
    const names = ev.attributes.map(([name]) => (taken.has(name) ? `end.${name}` : name));
    bv.endNames.set(endType, names);
    return names;
  }

  private log(e: BlockEvent, fields: DecodedFields, v: TypeView): void {
    const stack = this.openByThread.get(e.threadId);
    const innermost = stack?.length ? stack[stack.length - 1] : undefined;
    if (innermost) {
      if (innermost.events === NO_EVENTS) innermost.events = [];
      if (innermost.events.length < MAX_SPAN_EVENTS) innermost.events.push({ timeNs: this.time(e.timestampNs), name: e.type.key, keys: v.keys, fields: v.attributes, values: fields });
      else innermost.droppedEvents++;
      return;
    }
    const [severity, severityText] = SEVERITY[e.level] ?? [9, 'INFO'];
    const attributes = [fieldAttributes(fields, v), this.threadAttribute(e.threadId)];
    this.logs.push({ scope: e.provider, timeNs: this.time(e.timestampNs), severity, severityText, eventName: e.type.key, attributes });
    if (this.logs.length >= MAX_BATCH_ITEMS) this.flushLogs();
  }

  private counter(e: BlockEvent, fields: DecodedFields, v: TypeView): void {
    const declared = e.name.endsWith('.Counter');
    const group = declared ? counterGroup({ ...e, fields }) : e.type.key;
    const space = fields.space;
    const attributes: OtlpAttribute[] = typeof space === 'string' ? [['space', 'string', space]] : [];
    for (const [field] of v.counters) {
      const name = declared ? group : `${group}.${field}`;
      let m = this.gauges.get(name);
      if (!m) this.gauges.set(name, (m = { scope: e.provider, name, unit: declared ? field : '', kind: 'gauge', points: [] }));
      m.points.push({ timeNs: this.time(e.timestampNs), value: Number(fields[field]), attributes });
      this.addedPoint();
    }
  }

  private gcPause(fields: DecodedFields): void {
    const kind = String(fields.kind);
    const ms = Number(fields.durationNs) / 1e6;
    let h = this.gcPauses.get(kind);
    if (!h) this.gcPauses.set(kind, (h = { count: 0, sum: 0, min: Infinity, max: -Infinity, buckets: new Array<number>(GC_PAUSE_BOUNDS_MS.length + 1).fill(0) }));
    h.count++;
    h.sum += ms;
    h.min = Math.min(h.min, ms);
    h.max = Math.max(h.max, ms);
    let i = 0;
    while (i < GC_PAUSE_BOUNDS_MS.length && ms > GC_PAUSE_BOUNDS_MS[i]!) i++;
    h.buckets[i]!++;
  }

  private addedPoint(): void {
    if (++this.gaugePoints >= MAX_BATCH_ITEMS) this.flushMetrics();
  }

  private flushSpans(): void {
    if (this.spans.length === 0) return;
    const items = this.spans;
    this.spans = [];
    this.emit({ signal: 'traces', items, unixBaseNs: this.wallNs });
  }

  private flushLogs(): void {
    if (this.logs.length === 0) return;
    const items = this.logs;
    this.logs = [];
    this.emit({ signal: 'logs', items, unixBaseNs: this.wallNs });
  }

  /** Gauges as they are, and the GC pauses since the last flush as one delta histogram point per kind. */
  private flushMetrics(): void {
    const items: OtlpMetric[] = [...this.gauges.values()];
    if (this.gcPauses.size > 0) {
      const startNs = this.time(this.intervalStartNs ?? this.lastNs);
      const timeNs = this.time(this.lastNs);
      const points: OtlpHistogramPoint[] = [...this.gcPauses].map(([kind, h]) => ({
        startNs, timeNs, attributes: [['kind', 'string', kind]], count: h.count, sum: h.sum, min: h.min, max: h.max, bucketCounts: h.buckets, bounds: GC_PAUSE_BOUNDS_MS,
      }));
      items.push({ scope: 'Runtime.GC', name: 'Runtime.GC/GCPause', unit: 'ms', kind: 'histogram', points });
      this.gcPauses.clear();
      this.intervalStartNs = this.lastNs;
    }
    this.gauges = new Map();
    this.gaugePoints = 0;
    if (items.length > 0) this.emit({ signal: 'metrics', items, unixBaseNs: this.wallNs });
  }

  /** Emits everything finished so far (a time-based batch); open spans stay open. */
  flush(): void {
    this.flushSpans();
    this.flushMetrics();
    this.flushLogs();
  }

  /** The trace ended: spans still open end at the latest time seen, marked unfinished; then everything goes out. */
  finish(): void {
    for (const [id, s] of [...this.open].reverse()) this.close(id, s, this.lastNs);
    this.flush();
  }
}
