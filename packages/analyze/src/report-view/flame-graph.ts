// The HTML report's flame graph (an icicle: callers above their callees) of one sampled thread's CPU
// samples, drawn on a canvas from the call tree the report's maker computed (CpuFlameData). A classic
// script, inlined before the page script, which uses its one global: FlameGraph. Hover a bar for its
// self and total time; click it to zoom into it; click the top bar to zoom out.

type CpuFlameData = import('tracepipe/export').CpuFlameData;
type CpuFlameThread = import('tracepipe/export').CpuFlameThread;

/** Where a bar was drawn, in CSS pixels from the viewport's top left (for tests and the tooltip). */
interface FlameRect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** One thread's nodes laid out: the top bar (all samples) is node -1, at depth 0. */
interface FlameLayout {
  readonly t: CpuFlameThread;
  /** Per node: ms from the left edge of the top bar, and row. */
  readonly x: Float64Array;
  readonly depth: Int32Array;
  /** Node indexes per row, left to right. */
  readonly rows: number[][];
  /** The function's figures over all its nodes, by function index. */
  readonly byFunction: Map<number, { selfMs: number; totalMs: number }>;
  /** Rows past MAX_ROWS are not drawn. */
  readonly hiddenRows: number;
  /** Where the bar of the samples with no stack starts: after the outermost frames. */
  readonly noStackX: number;
}

/** The ms in view, and the pixels per ms. */
interface FlameView {
  readonly from: number;
  readonly to: number;
  readonly scale: number;
}

class FlameGraph {
  static readonly ROW = 18;
  /** Rows drawn at most: a canvas is at most 32,767 pixels high. */
  static readonly MAX_ROWS = 1500;
  /** The bar standing for a thread's samples in no function (a stack the trace does not define, or no frame). */
  static readonly NO_STACK = -2;

  private readonly canvas = document.createElement('canvas');
  /** Scrolls a deep graph within 70 % of the window's height, so the page stays short. */
  private readonly frame = document.createElement('div');
  private readonly tip = document.createElement('div');
  private readonly details = document.createElement('p');
  private readonly note = document.createElement('p');
  private layout!: FlameLayout;
  /** The node zoomed into (-1: none, the whole thread). */
  private zoomed = -1;
  /** Bars drawn at the last draw. */
  drawnFrames = 0;

  /** Draws into `section`; `onDraw` hears how many bars each draw drew. */
  constructor(
    private readonly section: HTMLElement,
    private readonly data: CpuFlameData,
    private readonly onDraw: (bars: number) => void,
  ) {
    const threads = data.threads;
    const busiest = threads.reduce((best, t) => (t.sampledMs > best.sampledMs ? t : best), threads[0]!);
    if (threads.length > 1) {
      const label = document.createElement('label');
      label.textContent = 'Thread ';
      const select = document.createElement('select');
      select.id = 'flame-thread';
      for (const t of threads) {
        const o = document.createElement('option');
        o.value = String(t.thread);
        o.textContent = `thread ${t.thread} (${countOf(t.samples, 'sample')}, ${t.sampledMs.toFixed(1)} ms)`;
        select.append(o);
      }
      select.value = String(busiest.thread);
      select.addEventListener('change', () => this.selectThread(Number(select.value)));
      label.append(select);
      section.append(label);
    }
    this.note.className = 'note';
    this.note.id = 'flame-note';
    this.details.className = 'note';
    this.details.id = 'flame-details';
    this.tip.className = 'tip';
    this.tip.id = 'flame-tip';
    this.canvas.id = 'flame-graph';
    this.canvas.style.display = 'block';
    this.canvas.style.cursor = 'pointer';
    this.frame.id = 'flame-frame';
    Object.assign(this.frame.style, { maxHeight: '70vh', overflowY: 'auto', border: '1px solid #e5e7eb' });
    this.frame.append(this.canvas);
    section.append(this.note, this.frame, this.details, this.tip);
    this.canvas.addEventListener('mousemove', (e) => this.hover(e));
    this.canvas.addEventListener('mouseleave', () => (this.tip.style.display = 'none'));
    this.canvas.addEventListener('click', (e) => this.click(e));
    this.selectThread(busiest.thread);
  }

  get thread(): number {
    return this.layout.t.thread;
  }

  selectThread(thread: number): void {
    const t = this.data.threads.find((x) => x.thread === thread);
    if (!t) throw new Error(`thread ${thread} was not sampled`);
    this.layout = FlameGraph.lay(t);
    this.zoomed = -1;
    const omitted = t.omittedNodes ? ` Only its ${t.nodes.function.length.toLocaleString('en-US')} most sampled call paths are kept: the other ${t.omittedNodes.toLocaleString('en-US')} (${t.omittedMs.toFixed(2)} ms of self time in all) show, zoomed in, as blank under their callers.` : '';
    const deep = this.layout.hiddenRows ? ` ${this.layout.hiddenRows} rows of calls deeper than ${FlameGraph.MAX_ROWS} are not drawn.` : '';
    const noStack = t.noStackSamples ? ` ${countOf(t.noStackSamples, 'sample')} ${t.noStackSamples === 1 ? 'has' : 'have'} no stack (the trace does not define it, or V8 gave no frame): the bar "(no stack)".` : '';
    this.note.textContent = `Thread ${t.thread}: ${countOf(t.samples, 'sample')}, ${t.sampledMs.toFixed(2)} ms sampled.${noStack}${omitted}${deep}`;
    this.show(null);
    this.draw();
  }

  /** Lays out a thread's nodes: each child from its parent's left edge on, after its earlier siblings. */
  private static lay(t: CpuFlameThread): FlameLayout {
    const n = t.nodes.function.length;
    const x = new Float64Array(n);
    const depth = new Int32Array(n);
    const next = new Float64Array(n);
    let nextTop = 0;
    const rows: number[][] = [[]];
    let hiddenRows = 0;
    for (let i = 0; i < n; i++) {
      const p = t.nodes.parent[i]!;
      if (p < 0) {
        x[i] = nextTop;
        nextTop += t.nodes.totalMs[i]!;
        depth[i] = 1;
      } else {
        x[i] = next[p]!;
        next[p]! += t.nodes.totalMs[i]!;
        depth[i] = depth[p]! + 1;
      }
      next[i] = x[i]!;
      if (depth[i]! >= FlameGraph.MAX_ROWS) {
        hiddenRows = Math.max(hiddenRows, depth[i]! - FlameGraph.MAX_ROWS + 1);
        continue;
      }
      (rows[depth[i]!] ??= []).push(i);
    }
    if (t.noStackMs > 0) (rows[1] ??= []).push(FlameGraph.NO_STACK);
    const byFunction = new Map<number, { selfMs: number; totalMs: number }>();
    t.functions.function.forEach((f, i) => byFunction.set(f, { selfMs: t.functions.selfMs[i]!, totalMs: t.functions.totalMs[i]! }));
    return { t, x, depth, rows, byFunction, hiddenRows, noStackX: nextTop };
  }

  /** A bar's extent in ms and its row (the top bar, a node, the samples with no stack). */
  private extent(node: number): { x: number; width: number; depth: number } {
    const { t } = this.layout;
    if (node === -1) return { x: 0, width: t.sampledMs, depth: 0 };
    if (node === FlameGraph.NO_STACK) return { x: this.layout.noStackX, width: t.noStackMs, depth: 1 };
    return { x: this.layout.x[node]!, width: t.nodes.totalMs[node]!, depth: this.layout.depth[node]! };
  }

  private name(node: number): string {
    if (node === -1) return `thread ${this.layout.t.thread}: all samples`;
    if (node === FlameGraph.NO_STACK) return '(no stack)';
    return this.data.functions[this.layout.t.nodes.function[node]!]!;
  }

  /** The ms shown on `widthPx` pixels: the zoomed node's extent (or the whole thread's). */
  private view(widthPx: number): FlameView {
    const e = this.extent(this.zoomed);
    const to = e.x + Math.max(e.width, 1e-9);
    return { from: e.x, to, scale: widthPx / (to - e.x) };
  }

  /** Where `node` is drawn now (CSS pixels, viewport coordinates); null when it is out of view or too narrow to draw. */
  rectOf(node: number): FlameRect | null {
    const box = this.canvas.getBoundingClientRect();
    const r = this.barPixels(node, this.view(box.width), box.width);
    return r && { x: box.left + r.x, y: box.top + r.y, width: r.width, height: r.height };
  }

  private barPixels(node: number, { from, scale }: FlameView, widthPx: number): FlameRect | null {
    const e = this.extent(node);
    if (e.depth >= FlameGraph.MAX_ROWS) return null;
    const x0 = Math.max(0, (e.x - from) * scale);
    const x1 = Math.min(widthPx, (e.x + e.width - from) * scale);
    if (x1 - x0 < 0.5) return null;
    return { x: x0, y: e.depth * FlameGraph.ROW, width: x1 - x0, height: FlameGraph.ROW - 1 };
  }

  private colour(node: number): string {
    if (node === -1) return '#d1d5db';
    const name = this.name(node);
    if (node === FlameGraph.NO_STACK || name.startsWith('(')) return name === '(garbage collector)' ? '#a78bfa' : '#cbd5e1';
    const url = this.data.urls[this.layout.t.nodes.function[node]!]!;
    // Node's own code in blues, native and unknown in greys, the program's in warm hues (the same function, the same hue).
    let h = 0;
    for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
    if (url.startsWith('node:')) return `hsl(${200 + (h % 30)}, 60%, ${70 + (h % 10)}%)`;
    if (url === '') return `hsl(0, 0%, ${72 + (h % 12)}%)`;
    return `hsl(${10 + (h % 40)}, ${70 + (h % 20)}%, ${58 + (h % 12)}%)`;
  }

  draw(): void {
    const widthPx = Math.max(480, this.section.clientWidth - 26);
    const rows = Math.min(this.layout.rows.length, FlameGraph.MAX_ROWS);
    const heightPx = rows * FlameGraph.ROW;
    const ratio = devicePixelRatio;
    this.canvas.width = Math.round(widthPx * ratio);
    this.canvas.height = Math.round(heightPx * ratio);
    this.canvas.style.width = `${widthPx}px`;
    this.canvas.style.height = `${heightPx}px`;
    const ctx = this.canvas.getContext('2d')!;
    ctx.scale(ratio, ratio);
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    let drawn = 0;
    const view = this.view(widthPx);
    const bar = (node: number) => {
      const r = this.barPixels(node, view, widthPx);
      if (!r) return;
      ctx.fillStyle = this.colour(node);
      ctx.fillRect(r.x, r.y, Math.max(1, r.width - 1), r.height);
      drawn++;
      if (r.width < 24) return;
      ctx.fillStyle = '#111827';
      ctx.fillText(FlameGraph.fit(ctx, this.name(node), r.width - 6), r.x + 3, r.y + r.height / 2);
    };
    bar(-1);
    for (let d = 1; d < rows; d++) for (const node of this.layout.rows[d] ?? []) bar(node);
    this.drawnFrames = drawn;
    this.onDraw(drawn);
  }

  /** `text` cut to `width` pixels, with an ellipsis. */
  private static fit(ctx: CanvasRenderingContext2D, text: string, width: number): string {
    if (ctx.measureText(text).width <= width) return text;
    let lo = 0;
    let hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ctx.measureText(`${text.slice(0, mid)}…`).width <= width) lo = mid;
      else hi = mid - 1;
    }
    return lo > 0 ? `${text.slice(0, lo)}…` : '';
  }

  /** The bar under a point of the canvas (CSS pixels), or undefined. */
  private barAt(px: number, py: number): number | undefined {
    const depth = Math.floor(py / FlameGraph.ROW);
    const widthPx = this.canvas.clientWidth;
    if (depth === 0) return -1;
    const view = this.view(widthPx);
    for (const node of this.layout.rows[depth] ?? []) {
      const r = this.barPixels(node, view, widthPx);
      if (r && px >= r.x && px < r.x + r.width) return node;
    }
    return undefined;
  }

  /** A bar's figures, as lines: self and total time, share of the thread's sampled time, samples. */
  describe(node: number): string[] {
    const { t } = this.layout;
    const pct = (ms: number) => `${t.sampledMs > 0 ? ((100 * ms) / t.sampledMs).toFixed(1) : '0.0'} %`;
    const lines = [this.name(node)];
    if (node === -1) {
      lines.push(`total ${t.sampledMs.toFixed(2)} ms (100 %, ${countOf(t.samples, 'sample')})`);
      return lines;
    }
    if (node === FlameGraph.NO_STACK) {
      lines.push(`self ${t.noStackMs.toFixed(2)} ms (${pct(t.noStackMs)}, ${countOf(t.noStackSamples, 'sample')})`);
      return lines;
    }
    const n = t.nodes;
    lines.push(`self ${n.selfMs[node]!.toFixed(2)} ms (${pct(n.selfMs[node]!)}, ${countOf(n.selfSamples[node]!, 'sample')}) · total ${n.totalMs[node]!.toFixed(2)} ms (${pct(n.totalMs[node]!)}, ${countOf(n.totalSamples[node]!, 'sample')})`);
    const all = this.layout.byFunction.get(n.function[node]!);
    if (all && (all.selfMs !== n.selfMs[node] || all.totalMs !== n.totalMs[node])) lines.push(`over all its calls: self ${all.selfMs.toFixed(2)} ms (${pct(all.selfMs)}) · total ${all.totalMs.toFixed(2)} ms (${pct(all.totalMs)})`);
    const url = this.data.urls[n.function[node]!];
    if (url) lines.push(url);
    return lines;
  }

  private hover(e: MouseEvent): void {
    const node = this.barAt(e.offsetX, e.offsetY);
    if (node === undefined) {
      this.tip.style.display = 'none';
      return;
    }
    this.tip.replaceChildren(...this.describe(node).map((line) => Object.assign(document.createElement('div'), { textContent: line })));
    this.tip.style.display = 'block';
    // Placed in the section (which it is positioned in) by the pointer's place in the window: the frame may be scrolled.
    const box = this.section.getBoundingClientRect();
    this.tip.style.left = `${Math.max(0, Math.min(e.clientX - box.left + 12, this.section.clientWidth - this.tip.offsetWidth))}px`;
    this.tip.style.top = `${e.clientY - box.top + 14}px`;
  }

  private click(e: MouseEvent): void {
    const node = this.barAt(e.offsetX, e.offsetY);
    if (node === undefined) return;
    this.zoomed = node === -1 || node === this.zoomed ? -1 : node;
    this.show(node === -1 ? null : node);
    this.draw();
  }

  /** The clicked bar's figures, under the graph (stays until the next click). */
  private show(node: number | null): void {
    this.details.textContent = node === null ? 'Click a bar to zoom into it and see its figures here; click the top bar to zoom out.' : this.describe(node).join(' — ');
  }

  /** The node zoomed into (-1 for none). */
  get zoomedNode(): number {
    return this.zoomed;
  }
}
