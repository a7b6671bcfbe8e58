// The HTML report's page script (runs in the browser; inlined into the page with uPlot, which it
// finds as a global). It lays out what ReportPageData holds: every GC pause, stall and drop range as
// it is, the sampled series as the report's maker downsampled them, the CPU samples as a flame graph
// (flame-graph.ts, inlined before this script). What it drew is counted on
// `window.tracepipeReport.drawn`, with the data, for tests.
import type { ReportPageData, TimeSeries } from 'tracepipe/export';

interface Drawn {
  gcPauseBars: number;
  stallSpans: number;
  unfinishedStallSpans: number;
  dropMarkers: number;
  /** Bars of the flame graph, for the thread shown. */
  flameFrames: number;
  /** Time charts that marked the addressed interval at their last draw. */
  focusMarks: number;
}

/** What the time charts show: the whole trace, or the interval the address names and its margin (seconds). */
interface Timeline {
  view: [number, number];
  focus: [number, number] | null;
  /** The charts over time that the address moves. */
  charts: number;
}

declare global {
  interface Window {
    /** renderedMs: the page script's own time; readyAtMs: since navigation began, when every chart was drawn. */
    tracepipeReport: { data: ReportPageData; drawn: Drawn; charts: string[]; plots: uPlot[]; timeline: Timeline; renderedMs: number; readyAtMs: number; flameGraph: FlameGraph | null };
  }
}

const data = JSON.parse(document.getElementById('tracepipe-data')!.textContent!) as ReportPageData;
const drawn: Drawn = { gcPauseBars: 0, stallSpans: 0, unfinishedStallSpans: 0, dropMarkers: 0, flameFrames: 0, focusMarks: 0 };
const charts: string[] = [];
/** Every uPlot chart, for tests that check what it drew (its axes' labels). */
const plots: uPlot[] = [];
const main = document.getElementById('report')!;

const KIND_COLOURS: Record<string, string> = { scavenge: '#3b82f6', 'mark-compact': '#dc2626', 'incremental-marking': '#f59e0b', 'weak-callbacks': '#8b5cf6' };
const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#65a30d', '#ea580c', '#4f46e5', '#0d9488', '#9333ea', '#64748b'];
const kindColour = (kind: string, i: number): string => KIND_COLOURS[kind] ?? PALETTE[(i + 4) % PALETTE.length]!;
const STALL_FILL = 'rgba(220, 38, 38, 0.12)';
const UNFINISHED_FILL = 'rgba(220, 38, 38, 0.28)';
const DROP_COLOUR = '#b91c1c';

/** The end of the time axis: the trace's last event (or the last thing drawn, if later). */
const endS = Math.max(
  data.trace.durationS,
  ...data.pauses.startS.map((s, i) => s + data.pauses.durationMs[i]! / 1000),
  ...data.stalls.startS.map((s, i) => s + data.stalls.durationMs[i]! / 1000),
  ...data.drops.atS,
  ...data.rates.x.map((x) => x + data.rates.bucketS),
);
const X_RANGE: [number, number] = [0, endS > 0 ? endS : 1];
const FOCUS_FILL = 'rgba(37, 99, 235, 0.18)';
const timeline: Timeline = { view: X_RANGE, focus: null, charts: 0 };
/** Every chart over time, so that the address moves them all. */
const timeCharts: uPlot[] = [];

function section(title: string, note: string): HTMLElement {
  const s = document.createElement('section');
  const h = document.createElement('h2');
  h.textContent = title;
  const p = document.createElement('p');
  p.className = 'note';
  p.textContent = note;
  s.append(h, p);
  main.append(s);
  return s;
}

const width = (): number => Math.max(480, main.clientWidth - 24);

/** Saves the canvas state and clips drawing to the plotting area; the caller restores. */
function clipToPlot(u: uPlot): CanvasRenderingContext2D {
  const { ctx, bbox } = u;
  ctx.save();
  ctx.beginPath();
  ctx.rect(bbox.left, bbox.top, bbox.width, bbox.height);
  ctx.clip();
  return ctx;
}

/** Options every time chart shares: the full width, the trace's time range, a cursor that follows across charts. */
function timeChart(height: number, axes: uPlot.Axis[], series: uPlot.Series[], hooks: uPlot.Hooks.Arrays, scales: uPlot.Scales = {}): uPlot.Options {
  return { width: width(), height, cursor: { sync: { key: 'time' } }, scales: { x: { time: false, range: () => timeline.view }, ...scales }, axes: [timeAxis, ...axes], series: [{ label: 's' }, ...series], hooks };
}

/** Red-shaded stall spans behind a time chart's lines (all threads' stalls). */
function shadeStalls(u: uPlot): void {
  const { bbox } = u;
  const ctx = clipToPlot(u);
  const span = (a: number, b: number, fill: string) => {
    const x0 = u.valToPos(a, 'x', true);
    const x1 = u.valToPos(b, 'x', true);
    ctx.fillStyle = fill;
    ctx.fillRect(x0, bbox.top, Math.max(1, x1 - x0), bbox.height);
  };
  let spans = 0;
  let unfinished = 0;
  data.stalls.startS.forEach((s, i) => {
    span(s, s + data.stalls.durationMs[i]! / 1000, STALL_FILL);
    spans++;
  });
  data.unfinishedStalls.startS.forEach((s) => {
    span(s, X_RANGE[1], UNFINISHED_FILL);
    unfinished++;
  });
  if (timeline.focus) {
    span(timeline.focus[0], timeline.focus[1], FOCUS_FILL);
    drawn.focusMarks++;
  }
  ctx.restore();
  drawn.stallSpans = spans;
  drawn.unfinishedStallSpans = unfinished;
}

const timeAxis: uPlot.Axis = { label: 'seconds since the trace began', values: (_u, ticks) => ticks.map((t) => `${+t.toFixed(3)}`) };

const COMPACT: ReadonlyArray<readonly [number, string]> = [[1e9, ' G'], [1e6, ' M'], [1e3, ' k']];
/** A tick value people read at a glance: 20 M, 1.5 k, 250, 0.25 (three significant digits at most). */
function compactNumber(v: number): string {
  const a = Math.abs(v);
  for (const [scale, suffix] of COMPACT) if (a >= scale) return `${+(v / scale).toPrecision(3)}${suffix}`;
  return `${+v.toPrecision(3)}`;
}

/**
 * A value axis (left, or right with side 1) whose tick labels are compact and whose width fits the
 * widest of them: uPlot's default width is fixed, and cut "20,000,000" to "0,000,000" under its title.
 */
function valueAxis(label: string, more: Partial<uPlot.Axis> = {}): uPlot.Axis {
  return {
    label,
    values: (_u, ticks) => ticks.map(compactNumber),
    size: (u, values, axisIdx, cycleNum) => {
      const axis = u.axes[axisIdx]!;
      // Past the first layout pass the ticks are settled: keep the width found (uPlot's own advice).
      if (cycleNum > 1) return (axis as uPlot.Axis & { _size: number })._size;
      u.ctx.font = axis.font![0] as unknown as string;
      const widest = Math.max(0, ...(values ?? []).map((v) => u.ctx.measureText(v).width / devicePixelRatio));
      return Math.ceil((axis.ticks?.size ?? 10) + (axis.gap ?? 5) + widest + AXIS_MARGIN_PX);
    },
    ...more,
  };
}
/** Room between the widest tick label and the axis title. */
const AXIS_MARGIN_PX = 6;

/** A time chart of downsampled series, stalls shaded; a note instead when there is nothing to draw. */
function lineChart(title: string, note: string, series: readonly TimeSeries[], unit: string, options: { extra?: readonly TimeSeries[]; extraUnit?: string; stepped?: boolean } = {}): void {
  const s = section(title, note);
  const all = [...series, ...(options.extra ?? [])];
  if (all.every((x) => x.x.length === 0)) {
    s.querySelector('.note')!.textContent += ' No such events in this trace.';
    return;
  }
  const joined = uPlot.join(all.map((x) => [x.x as number[], x.y as number[]] as uPlot.AlignedData));
  const extraCount = options.extra?.length ?? 0;
  const u = new uPlot(
    timeChart(
      260,
      [valueAxis(unit), ...(extraCount ? [valueAxis(options.extraUnit ?? '', { side: 1, scale: 'pct', grid: { show: false } })] : [])],
      all.map((x, i): uPlot.Series => ({
        label: x.name,
        stroke: PALETTE[i % PALETTE.length],
        width: 1.5,
        spanGaps: true,
        points: { show: false },
        ...(options.stepped ? { paths: uPlot.paths.stepped!({ align: 1 }) } : {}),
        ...(i >= series.length ? { scale: 'pct', dash: [4, 3] } : {}),
      })),
      { drawClear: [shadeStalls] },
      extraCount ? { pct: { range: [0, 100] } } : {},
    ),
    joined,
    s,
  );
  charts.push(title);
  plots.push(u);
  timeCharts.push(u);
  resizers.push((w) => u.setSize({ width: w, height: 260 }));
}

const resizers: Array<(w: number) => void> = [];

/** Every GC pause: a bar from its start for its duration, as high as it is long, coloured by kind; thresholds drawn; hover tells kind, duration, heap after. */
function pauseTimeline(): void {
  const p = data.pauses;
  const s = section('GC pauses', `Every Runtime.GC/GCPause at its true start, its width and height its duration; dashed lines at --info-ms ${data.thresholds.infoMs} ms and --warn-ms ${data.thresholds.warnMs} ms; stalls shaded. Hover a bar for its kind, duration and heap after.`);
  if (p.startS.length === 0) {
    s.querySelector('.note')!.textContent += ' No GC pauses in this trace.';
    return;
  }
  const maxMs = Math.max(data.thresholds.warnMs, ...p.durationMs) * 1.1;
  const tip = document.createElement('div');
  tip.className = 'tip';
  const options = timeChart(
    280,
    [valueAxis('pause (ms)')],
    // One legend entry per kind; the bars themselves are drawn by the draw hook.
    p.kinds.map((k, i): uPlot.Series => ({ label: k, stroke: kindColour(k, i), fill: kindColour(k, i), paths: () => null, points: { show: false } })),
    {
      drawClear: [shadeStalls],
      draw: [
        (chart) => {
          const { bbox } = chart;
          const ctx = clipToPlot(chart);
          const y0 = chart.valToPos(0, 'y', true);
          let bars = 0;
          for (let i = 0; i < p.startS.length; i++) {
            const x0 = chart.valToPos(p.startS[i]!, 'x', true);
            const x1 = chart.valToPos(p.startS[i]! + p.durationMs[i]! / 1000, 'x', true);
            const y = chart.valToPos(p.durationMs[i]!, 'y', true);
            ctx.fillStyle = kindColour(p.kinds[p.kind[i]!]!, p.kind[i]!);
            ctx.fillRect(x0, y, Math.max(devicePixelRatio, x1 - x0), Math.max(devicePixelRatio, y0 - y));
            bars++;
          }
          ctx.setLineDash([6, 4]);
          for (const [ms, colour] of [[data.thresholds.infoMs, '#d97706'], [data.thresholds.warnMs, '#dc2626']] as const) {
            const y = chart.valToPos(ms, 'y', true);
            ctx.strokeStyle = colour;
            ctx.beginPath();
            ctx.moveTo(bbox.left, y);
            ctx.lineTo(bbox.left + bbox.width, y);
            ctx.stroke();
          }
          ctx.restore();
          drawn.gcPauseBars = bars;
        },
      ],
      setCursor: [
        (chart) => {
          const left = chart.cursor.left ?? -1;
          const hit = left < 0 ? -1 : pauseAt(chart, left);
          if (hit < 0) {
            tip.style.display = 'none';
            return;
          }
          const heap = p.heapAfterMB[hit];
          tip.textContent = `${p.kinds[p.kind[hit]!]} · ${p.durationMs[hit]!.toFixed(3)} ms · heap after ${heap === null ? 'unknown' : `${heap!.toFixed(1)} MB`} · thread ${p.thread[hit]} · at ${p.startS[hit]!.toFixed(6)} s`;
          tip.style.display = 'block';
          tip.style.left = `${Math.min(left + 12, chart.over.clientWidth - 260)}px`;
          tip.style.top = `${Math.max(0, chart.cursor.top ?? 0) + 12}px`;
        },
      ],
    },
    { y: { range: [0, maxMs] } },
  );
  const u = new uPlot(
    { ...options, cursor: { ...options.cursor, points: { show: false } }, legend: { live: false } },
    [p.startS as number[], ...p.kinds.map((_, k) => p.durationMs.map((d, i) => (p.kind[i] === k ? d : null)))],
    s,
  );
  u.over.append(tip);
  charts.push('GC pauses');
  plots.push(u);
  timeCharts.push(u);
  resizers.push((w) => u.setSize({ width: w, height: 280 }));
}

/** The pause under (or within 3 px of) a cursor position, preferring the longest; -1 for none. */
function pauseAt(u: uPlot, left: number): number {
  const p = data.pauses;
  const slack = 3;
  const lo = u.posToVal(left - slack, 'x');
  const hi = u.posToVal(left + slack, 'x');
  let best = -1;
  for (let i = 0; i < p.startS.length; i++) {
    if (p.startS[i]! > hi || p.startS[i]! + p.durationMs[i]! / 1000 < lo) continue;
    if (best < 0 || p.durationMs[i]! > p.durationMs[best]!) best = i;
  }
  return best;
}

/** Log-spaced bins (4 per decade) from 10 µs to the longest pause. */
function histogram(): void {
  const p = data.pauses;
  const s = section('Pause durations by kind', 'How many pauses of each kind took how long (bins of a quarter decade, log scale).');
  if (p.startS.length === 0) {
    s.querySelector('.note')!.textContent += ' No GC pauses in this trace.';
    return;
  }
  const lo = Math.floor(Math.log10(Math.max(0.01, Math.min(...p.durationMs))) * 4);
  const hi = Math.ceil(Math.log10(Math.max(0.01, ...p.durationMs)) * 4) + 1;
  const edges = Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** ((lo + i) / 4));
  const counts = p.kinds.map(() => new Array<number>(edges.length).fill(0));
  p.durationMs.forEach((d, i) => {
    const b = Math.min(edges.length - 2, Math.max(0, Math.floor(Math.log10(Math.max(0.01, d)) * 4) - lo));
    counts[p.kind[i]!]![b]!++;
  });
  const u = new uPlot(
    {
      width: width(),
      height: 240,
      scales: { x: { time: false, distr: 3 } },
      axes: [{ label: 'pause (ms)' }, valueAxis('pauses')],
      series: [{ label: 'ms' }, ...p.kinds.map((k, i): uPlot.Series => ({ label: k, stroke: kindColour(k, i), fill: `${kindColour(k, i)}55`, paths: uPlot.paths.stepped!({ align: 1 }), points: { show: false } }))],
    },
    [edges, ...counts],
    s,
  );
  charts.push('Pause durations by kind');
  plots.push(u);
  resizers.push((w) => u.setSize({ width: w, height: 240 }));
}

/** The share of wall time each thread spent in GC pauses, per bucket (a second, or coarser for long traces), pauses split at bucket edges. */
function gcShare(): void {
  const p = data.pauses;
  // A second per bucket; a trace too short for that gets finer ones (1, 2 or 5 × 10^k s, at most 100 over it), a long one coarser (at most 2,000).
  const fine = 10 ** Math.floor(Math.log10(X_RANGE[1] / 100));
  const bucketS = X_RANGE[1] < 100 ? [1, 2, 5, 10].map((m) => m * fine).find((w) => X_RANGE[1] / w <= 100)! : Math.max(1, Math.ceil(X_RANGE[1] / 2000));
  const buckets = Math.ceil(X_RANGE[1] / bucketS);
  const threads = [...new Set(p.thread)].sort((a, b) => a - b);
  const series: TimeSeries[] = threads.map((t) => {
    const ms = new Array<number>(buckets).fill(0);
    p.startS.forEach((start, i) => {
      if (p.thread[i] !== t) return;
      let a = Math.max(0, start);
      const end = start + p.durationMs[i]! / 1000;
      while (a < end) {
        const b = Math.min(buckets - 1, Math.floor(a / bucketS));
        const edge = Math.max((b + 1) * bucketS, a + 1e-12);
        ms[b]! += (Math.min(end, edge) - a) * 1000;
        a = edge;
      }
    });
    return { name: `thread ${t}`, x: ms.map((_, b) => b * bucketS), y: ms.map((v) => (100 * v) / (bucketS * 1000)) };
  });
  lineChart('Time in GC', `Percent of wall time in GC pauses per ${bucketS === 1 ? 'second' : `${+bucketS.toPrecision(3)} s`}, per thread; stalls shaded.`, series, '% of wall time', { stepped: true });
}

/** Events per second per event type, drop ranges marked on the time axis. */
function rates(): void {
  const r = data.rates;
  const s = section('Events per second', `Per event type, in buckets of ${r.bucketS >= 1 ? `${r.bucketS} s` : `${r.bucketS * 1000} ms`}. Red marks on the time axis: where events were dropped (${countOf(data.drops.atS.length, 'drop range')}${data.drops.omitted ? `, ${data.drops.omitted.toLocaleString('en-US')} more not placed` : ''}).`);
  const sampling = data.report.explain.requestSampling;
  if (sampling) s.querySelector('.note')!.textContent += ` Requests were sampled (rate ${sampling.rate}): their events are the kept requests'${sampling.factor === null ? '' : `, ×${sampling.factor.toFixed(2)} for all`}.`;
  if (r.x.length === 0) {
    s.querySelector('.note')!.textContent += ' No events in this trace.';
    return;
  }
  const u = new uPlot(
    timeChart(
      300,
      [valueAxis('events/s')],
      r.series.map((x, i): uPlot.Series => ({ label: x.name, stroke: PALETTE[i % PALETTE.length], width: 1.5, points: { show: false }, paths: uPlot.paths.stepped!({ align: 1 }) })),
      {
        drawClear: [shadeStalls],
        draw: [
          (chart) => {
            const { ctx, bbox } = chart;
            ctx.save();
            ctx.fillStyle = DROP_COLOUR;
            ctx.strokeStyle = DROP_COLOUR;
            const bottom = bbox.top + bbox.height;
            let marks = 0;
            for (const at of data.drops.atS) {
              const x = chart.valToPos(at, 'x', true);
              ctx.globalAlpha = 0.35;
              ctx.beginPath();
              ctx.moveTo(x, bbox.top);
              ctx.lineTo(x, bottom);
              ctx.stroke();
              ctx.globalAlpha = 1;
              ctx.beginPath();
              ctx.moveTo(x, bottom - 8 * devicePixelRatio);
              ctx.lineTo(x - 5 * devicePixelRatio, bottom);
              ctx.lineTo(x + 5 * devicePixelRatio, bottom);
              ctx.fill();
              marks++;
            }
            ctx.restore();
            drawn.dropMarkers = marks;
          },
        ],
      },
    ),
    [r.x as number[], ...r.series.map((x) => x.perSecond as number[])],
    s,
  );
  charts.push('Events per second');
  plots.push(u);
  timeCharts.push(u);
  resizers.push((w) => u.setSize({ width: w, height: 300 }));
}

/** The CPU samples of one thread (chosen when several were sampled) as a flame graph; hover and click in flame-graph.ts. */
function flameGraph(): FlameGraph | null {
  const s = section('CPU: flame graph', 'Runtime.CpuSampler: where one thread spent its sampled time. Each bar is a function on a path of calls, as wide as its total time (itself and what it called), its callees under it, the widest first; the top bar is all the samples. Hover a bar for its self and total time; click it to zoom into it, the top bar to zoom out. The text report below lists the top functions, and what was on CPU during each stall and slowest span.');
  if (data.cpu.threads.length === 0) {
    s.querySelector('.note')!.textContent += ' No CPU samples in this trace (enable Runtime.CpuSampler, or collect with --profile cpu).';
    return null;
  }
  const graph = new FlameGraph(s, data.cpu, (bars) => (drawn.flameFrames = bars));
  resizers.push(() => graph.draw());
  charts.push('CPU: flame graph');
  return graph;
}

/**
 * Head sampling (Node.Channels' sample=): what was kept, and each request span's count and rate as
 * kept and as estimated for all requests (the report's estimates). Durations need no scaling.
 */
function requestSampling(): void {
  const sampling = data.report.explain.requestSampling;
  if (!sampling) return;
  const kept = sampling.requests > 0 ? `kept ${sampling.kept.toLocaleString('en-US')} of ${countOf(sampling.requests, 'server request')} whole` : 'kept server requests whole';
  const scale = sampling.factor === null ? 'Nothing was kept, so nothing can be estimated.' : `Estimated for all requests: ×${sampling.factor.toFixed(2)}, the "est." columns.`;
  const s = section('Requests sampled', `Node.Channels ${kept} (rate ${sampling.rate}): counts and rates of requests' spans and events on this page are of the kept ones. ${scale} Durations are as observed: sampling does not pick requests by how long they take.`);
  const rows = data.report.spans.byName.filter((x) => x.inRequests > 0);
  if (rows.length === 0 || sampling.factor === null) return;
  const perSecond = (n: number) => (data.trace.durationS > 0 ? (n / data.trace.durationS).toFixed(1) : '0');
  const table = document.createElement('table');
  table.className = 'sampled';
  const line = (cells: readonly string[], tag: 'th' | 'td') => {
    const tr = document.createElement('tr');
    for (const c of cells) {
      const cell = document.createElement(tag);
      cell.textContent = c;
      tr.append(cell);
    }
    table.append(tr);
  };
  line(['span', 'kept', 'est. all', 'kept per second', 'est. per second'], 'th');
  for (const x of rows) line([x.span, x.count.toLocaleString('en-US'), x.estimatedCount!.toLocaleString('en-US'), perSecond(x.count), perSecond(x.estimatedCount!)], 'td');
  s.append(table);
}

function textReport(): void {
  const s = section('The text report', '`tracepipe report` of the same trace: its tables.');
  const pre = document.createElement('pre');
  pre.textContent = data.reportText;
  s.append(pre);
}

/**
 * The timeline's address: `#t=FROM,TO` (seconds since the trace began, as the time axes count) shows
 * every time chart from a little before FROM to a little after TO, with the interval marked; without
 * it they show the whole trace. The "why it was slow" section links each item to its own.
 */
function readAddress(): [number, number] | null {
  const m = /^#t=([^,]+),([^,]+)$/.exec(location.hash);
  if (!m) return null;
  const from = Number(m[1]);
  const to = Number(m[2]);
  return Number.isFinite(from) && Number.isFinite(to) && to >= from ? [from, to] : null;
}

function showAddress(): void {
  const focus = readAddress();
  const margin = focus ? Math.max((focus[1] - focus[0]) / 2, 0.001) : 0;
  timeline.focus = focus;
  timeline.view = focus ? [focus[0] - margin, focus[1] + margin] : X_RANGE;
  drawn.focusMarks = 0;
  timeline.charts = timeCharts.length;
  for (const u of timeCharts) u.setScale('x', { min: timeline.view[0], max: timeline.view[1] });
  if (focus) timeCharts[0]?.root.parentElement?.scrollIntoView({ block: 'start' });
}

const started = performance.now();
document.getElementById('subtitle')!.textContent = `${data.trace.file} · pid ${data.trace.pid} on ${data.trace.hostname} · node ${data.trace.nodeVersion} · began ${data.trace.startedAt} · ${countOf(data.trace.events, 'event')} over ${data.trace.durationS.toFixed(3)} s · ${countOf(data.report.gc.all.count, 'GC pause')} · ${countOf(data.report.stalls.count, 'stall')} · ${countOf(data.report.drops.dropped, 'event')} dropped`;
requestSampling();
pauseTimeline();
histogram();
gcShare();
lineChart('Heap', 'Runtime.GCHeap/HeapStats: used and total heap per thread (MB); stalls shaded.', data.heap, 'MB');
lineChart('Heap spaces', 'Runtime.GCHeap/HeapSpace: used size of each heap space per thread (MB).', data.spaces, 'MB');
lineChart('Event loop', 'Runtime.EventLoop/Delay: delay p50, p99 and max (ms, left) and utilisation (%, right, dashed) per thread; stalls shaded.', data.loopDelay, 'delay (ms)', { extra: data.loopUtilization, extraUnit: 'utilisation (%)' });
for (const g of data.counters) lineChart(`Counters: ${g.provider} (${g.unit})`, `${g.provider}: its counters in ${g.unit}, one line each (interval counters: the amount in each interval); stalls shaded.`, g.series, g.unit);
rates();
const flame = flameGraph();
textReport();
addEventListener('resize', () => resizers.forEach((r) => r(width())));
addEventListener('hashchange', showAddress);
if (location.hash) showAddress();
window.tracepipeReport = { data, drawn, charts, plots, timeline, renderedMs: performance.now() - started, readyAtMs: performance.now(), flameGraph: flame };
