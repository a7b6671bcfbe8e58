import type { CpuProfile } from '../../analysis/cpu-profile.js';
import { gcPauseSlice, StallSlices } from '../../export/runtime-view.js';
import { timelineRole } from '../../format/timeline-role.js';
import { typeRole } from '../../schema/type-role.js';
import type { BlockEvent } from '../../format/events-block.js';
import type { TraceHeader } from '../../format/stream-header.js';
import type { StreamEventType } from '../../format/trace-event.js';
import type { EventBatch } from '../../format/trace-reader.js';
import type { ReportOptions, TraceReport } from '../trace-report.js';
import { cpuFlameData } from './cpu-flame-data.js';
import type { ReportPageData, TimeSeries } from './report-page-data.js';
import { CountSeries, MinMaxSeries, TimeGrid } from './time-grid.js';

/** Drop ranges placed on the time axis at most (the reader keeps as many); the rest are counted. */
export const MAX_DROP_MARKERS = 10_000;
/** Event types with their own line in the events-per-second chart; the rest share one. */
const RATE_LINES = 12;

const MB = 1 / (1024 * 1024);

/** What an event type contributes to the charts. */
type Role = 'gc-pause' | 'stall-start' | 'stall-end' | 'heap' | 'space' | 'delay' | 'declared-counter' | 'other';

function roleOf(t: StreamEventType): Role {
  const timeline = timelineRole(t);
  if (timeline === 'gc-pause' || timeline === 'stall-start' || timeline === 'stall-end') return timeline;
  if (timeline !== 'counter') return 'other';
  if (typeRole(t.descriptor)?.kind === 'counter') return 'declared-counter';
  return t.key === 'Runtime.GCHeap/HeapStats' ? 'heap' : t.key === 'Runtime.GCHeap/HeapSpace' ? 'space' : t.key === 'Runtime.EventLoop/Delay' ? 'delay' : 'other';
}

interface TypeInfo {
  readonly role: Role;
  readonly rate: CountSeries;
}

/** Series made on first use, by name. */
class SeriesSet {
  private readonly byName = new Map<string, MinMaxSeries>();

  constructor(private readonly grid: TimeGrid) {}

  get(name: string): MinMaxSeries {
    let s = this.byName.get(name);
    if (!s) this.byName.set(name, (s = this.grid.join(new MinMaxSeries(this.grid, name))));
    return s;
  }

  all(scale: number): TimeSeries[] {
    return [...this.byName.values()].sort((a, b) => a.name.localeCompare(b.name)).map((s) => s.series(scale));
  }
}

const num = (v: unknown): number => (typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : NaN);

/**
 * Collects what the HTML report draws, batch by batch as `buildReport` reads the trace: every GC
 * pause, stall and drop range (they are few, and each is drawn), and the sampled figures and event
 * rates in time buckets (TimeGrid), so memory stays bounded whatever the trace size.
 */
export class ReportCharts {
  private readonly grid = new TimeGrid();
  private readonly types = new Map<StreamEventType, TypeInfo>();
  private readonly rates = new Map<string, CountSeries>();
  private readonly heap = new SeriesSet(this.grid);
  private readonly spaces = new SeriesSet(this.grid);
  private readonly delay = new SeriesSet(this.grid);
  private readonly utilization = new SeriesSet(this.grid);
  /** Declared counters (Runtime.Counters' among them), one chart per provider and unit. */
  private readonly counterGroups = new Map<string, { provider: string; unit: string; series: SeriesSet }>();
  private readonly stallPairs = new StallSlices();
  private readonly kinds = new Map<string, number>();
  private readonly pauses = { startNs: [] as number[], durationMs: [] as number[], kind: [] as number[], thread: [] as number[], heapAfterMB: [] as Array<number | null> };
  private readonly stalls = { startNs: [] as number[], durationMs: [] as number[], thread: [] as number[] };
  private readonly drops = { atNs: [] as number[], thread: [] as number[], count: [] as number[], omitted: 0 };
  private header: TraceHeader | undefined;

  private info(t: StreamEventType): TypeInfo {
    let rate = this.rates.get(t.key);
    if (!rate) this.rates.set(t.key, (rate = this.grid.join(new CountSeries(this.grid))));
    const info = { role: roleOf(t), rate };
    this.types.set(t, info);
    return info;
  }

  add(batch: EventBatch): void {
    this.header ??= batch.header;
    for (const e of batch.events) {
      const info = this.types.get(e.type) ?? this.info(e.type);
      info.rate.add(e.timestampNs);
      if (info.role !== 'other') this.runtimeEvent(info.role, e);
    }
    for (const d of batch.drops) {
      if (this.drops.atNs.length >= MAX_DROP_MARKERS) {
        this.drops.omitted++;
        continue;
      }
      this.drops.atNs.push(d.timestampNs);
      this.drops.thread.push(d.threadId);
      this.drops.count.push(d.count);
    }
  }

  private runtimeEvent(role: Exclude<Role, 'other'>, e: BlockEvent): void {
    const f = e.fields;
    const t = e.timestampNs;
    const thread = `thread ${e.threadId}`;
    switch (role) {
      case 'gc-pause': {
        const s = gcPauseSlice(e);
        let kind = this.kinds.get(s.name);
        if (kind === undefined) this.kinds.set(s.name, (kind = this.kinds.size));
        const heapAfter = num(f.heapUsedAfter);
        this.pauses.startNs.push(s.startNs);
        this.pauses.durationMs.push(s.durationNs! / 1e6);
        this.pauses.kind.push(kind);
        this.pauses.thread.push(s.threadId);
        this.pauses.heapAfterMB.push(Number.isFinite(heapAfter) ? heapAfter * MB : null);
        break;
      }
      case 'stall-start':
        this.stallPairs.start(e);
        break;
      case 'stall-end': {
        const s = this.stallPairs.end(e);
        this.stalls.startNs.push(s.startNs);
        this.stalls.durationMs.push(s.durationNs! / 1e6);
        this.stalls.thread.push(s.threadId);
        break;
      }
      case 'heap':
        this.heap.get(`used, ${thread}`).add(t, num(f.usedBytes));
        this.heap.get(`total, ${thread}`).add(t, num(f.totalBytes));
        break;
      case 'space':
        this.spaces.get(`${String(f.space)}, ${thread}`).add(t, num(f.usedBytes));
        break;
      case 'declared-counter': {
        const role = typeRole(e.type.descriptor);
        if (role?.kind !== 'counter') break;
        const key = `${e.provider}\u0000${role.unit}`;
        let group = this.counterGroups.get(key);
        if (!group) this.counterGroups.set(key, (group = { provider: e.provider, unit: role.unit, series: new SeriesSet(this.grid) }));
        group.series.get(e.threadId === 0 ? role.counter : `${role.counter}, ${thread}`).add(t, num(f[role.unit]));
        break;
      }
      case 'delay':
        for (const p of ['p50Ms', 'p99Ms', 'maxMs'] as const) this.delay.get(`${p.slice(0, -2)}, ${thread}`).add(t, num(f[p]));
        this.utilization.get(`utilisation, ${thread}`).add(t, 100 * num(f.utilization));
        break;
    }
  }

  /** The page's data, once the whole trace went through `add`; `profile`: the CPU samples buildReport read (readReport). */
  data(file: string, report: TraceReport, reportText: string, options: ReportOptions, profile: CpuProfile): ReportPageData {
    const h = this.header;
    const order = (starts: readonly number[]) => starts.map((_, i) => i).sort((a, b) => starts[a]! - starts[b]!);
    const p = this.pauses;
    const byStart = order(p.startNs);
    const s = this.stalls;
    const stallOrder = order(s.startNs);
    const pick = <T>(list: readonly T[], idx: readonly number[]) => idx.map((i) => list[i]!);
    const unfinished = this.stallPairs.unfinished();
    const widthS = this.grid.widthNs / 1e9;
    const rateList = [...this.rates].map(([name, c]) => ({ name, counts: c.counts, total: c.counts.reduce((a, b) => a + b, 0) })).sort((a, b) => b.total - a.total);
    const buckets = Math.max(0, ...rateList.map((r) => r.counts.length));
    const shown = rateList.length > RATE_LINES + 1 ? rateList.slice(0, RATE_LINES) : rateList;
    const rest = rateList.slice(shown.length);
    const lines = rest.length > 0 ? [...shown, { name: `other (${rest.length} event types)`, counts: Array.from({ length: buckets }, (_, b) => rest.reduce((n, r) => n + (r.counts[b] ?? 0), 0)) }] : shown;
    return {
      title: h ? `${h.argv.slice(1).join(' ') || h.processTitle} (pid ${h.pid})` : file,
      trace: {
        file,
        pid: h?.pid ?? 0,
        hostname: h?.hostname ?? '',
        nodeVersion: h?.nodeVersion ?? '',
        startedAt: h && /^\d+$/.test(h.clock.wallClockNs) ? new Date(Number(BigInt(h.clock.wallClockNs) / 1_000_000n)).toISOString() : '',
        events: report.events,
        durationS: report.wallNs / 1e9,
      },
      thresholds: { infoMs: options.infoMs, warnMs: options.warnMs },
      pauses: {
        kinds: [...this.kinds.keys()],
        startS: byStart.map((i) => p.startNs[i]! / 1e9),
        durationMs: pick(p.durationMs, byStart),
        kind: pick(p.kind, byStart),
        thread: pick(p.thread, byStart),
        heapAfterMB: pick(p.heapAfterMB, byStart),
      },
      stalls: { startS: stallOrder.map((i) => s.startNs[i]! / 1e9), durationMs: pick(s.durationMs, stallOrder), thread: pick(s.thread, stallOrder) },
      unfinishedStalls: { startS: unfinished.map((u) => u.startNs / 1e9), thread: unfinished.map((u) => u.threadId) },
      drops: { atS: this.drops.atNs.map((t) => t / 1e9), thread: this.drops.thread, count: this.drops.count, omitted: this.drops.omitted },
      rates: {
        bucketS: widthS,
        x: Array.from({ length: buckets }, (_, b) => b * widthS),
        series: lines.map((r) => ({ name: r.name, perSecond: Array.from({ length: buckets }, (_, b) => (r.counts[b] ?? 0) / widthS) })),
      },
      heap: this.heap.all(MB),
      spaces: this.spaces.all(MB),
      loopDelay: this.delay.all(1),
      loopUtilization: this.utilization.all(1),
      counters: [...this.counterGroups.values()]
        .sort((a, b) => a.provider.localeCompare(b.provider) || a.unit.localeCompare(b.unit))
        .map((g) => ({ provider: g.provider, unit: g.unit === 'bytes' ? 'MB' : g.unit, series: g.series.all(g.unit === 'bytes' ? MB : 1) })),
      cpu: cpuFlameData(profile),
      report,
      reportText,
    };
  }
}
