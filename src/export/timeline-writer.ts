import type { ByteWriter } from '../format/byte-writer.js';
import type { BlockEvent } from '../format/events-block.js';
import type { TraceHeader } from '../format/stream-header.js';
import type { StreamEventType } from '../format/trace-event.js';
import type { EventBatch, PlacedDrop } from '../format/trace-reader.js';
import { ExportOutput, FLUSH_BYTES } from './export-output.js';
import type { ExportEnd, ExportFiles, ExportWriter } from './export-writer.js';
import { gcPauseSlice, isThreadInfo, type Slice, StallSlices, ThreadNames } from './runtime-view.js';
import { timelineRole, type TimelineRole } from '../format/timeline-role.js';
import { type SpanFlow, type SpanSlice, SpanSlices } from './span-slices.js';

/** What a timeline format works out once per type; `role` and `threadInfo` drive the dispatch. */
export interface TypeView {
  readonly role: TimelineRole;
  readonly threadInfo: boolean;
}

/**
 * What the timeline formats (Perfetto, Chrome) share: one output file filled from a byte buffer,
 * thread names, stall and span pairing, the losses per thread, and the dispatch of each event to its
 * role in runtime-view.ts (a GC pause or a stall is a slice on a track named "GC" or "event loop", a
 * span a slice on a lane of its thread, heap and loop figures and declared counters are counters, the
 * rest instants). A format says how each of those is written.
 */
export abstract class TimelineWriter<V extends TypeView> implements ExportWriter {
  protected out: ExportOutput | undefined;
  protected header: TraceHeader | undefined;
  protected threads = new ThreadNames(0);
  protected readonly droppedByThread = new Map<number, number>();
  private readonly stalls = new StallSlices();
  private readonly spans = new SpanSlices((slice, flows) => this.spanSlice(slice, flows));
  private readonly views = new Map<StreamEventType, V>();
  /** The last event's type and view: runs of one type are the rule, and a Map look-up per event shows in the profile. */
  private lastType: StreamEventType | undefined;
  private lastView: V | undefined;
  /** The latest time seen: where spans still open at the end are closed. */
  private lastNs = 0;

  constructor(
    protected readonly path: string,
    /** Where the format's bytes wait until they pass FLUSH_BYTES. */
    protected readonly buffer: ByteWriter,
  ) {}

  async write(batch: EventBatch): Promise<void> {
    if (!this.out) {
      this.out = await ExportOutput.create(this.path);
      this.header = batch.header;
      this.threads = new ThreadNames(batch.header.pid);
      this.begin(batch.header);
    }
    for (const d of batch.drops) {
      this.droppedByThread.set(d.threadId, (this.droppedByThread.get(d.threadId) ?? 0) + d.count);
      this.drop(d);
    }
    for (const e of batch.events) {
      if (e.timestampNs > this.lastNs) this.lastNs = e.timestampNs;
      this.event(e);
    }
    if (this.buffer.pos >= FLUSH_BYTES) await this.flush();
  }

  private event(e: BlockEvent): void {
    const v = e.type === this.lastType ? this.lastView! : this.viewOf(e);
    switch (v.role) {
      case 'gc-pause':
        return this.slice(gcPauseSlice(e), 'GC');
      case 'stall-start':
        return this.stalls.start(e);
      case 'stall-end':
        return this.slice(this.stalls.end(e), 'event loop');
      case 'span-begin':
        return this.spans.begin(e);
      case 'span-end':
        // An end whose begin is not in the trace stays visible as what it is.
        if (!this.spans.end(e)) this.instant(e, v);
        return;
      case 'counter':
        return this.counter(e, v);
      case 'cpu-sample':
        return this.cpuSample(e, v);
      case 'instant':
        this.instant(e, v);
        if (v.threadInfo) {
          const renamed = this.threads.observe(e);
          if (renamed !== undefined) this.renamed(renamed, e.timestampNs);
        }
    }
  }

  private viewOf(e: BlockEvent): V {
    let v = this.views.get(e.type);
    if (!v) {
      v = this.view(e.type, e.fields, timelineRole(e.type), isThreadInfo(e.type));
      this.views.set(e.type, v);
    }
    this.lastType = e.type;
    this.lastView = v;
    return v;
  }

  private async flush(): Promise<void> {
    await this.out!.write(this.buffer.buf.subarray(0, this.buffer.pos));
    this.buffer.pos = 0;
  }

  async finish(end: ExportEnd): Promise<ExportFiles> {
    this.spans.finish(this.lastNs);
    for (const s of this.stalls.unfinished()) this.slice(s, 'event loop');
    this.end(end);
    await this.flush();
    await this.out!.close();
    return { path: this.path, files: 1, bytes: this.out!.bytes };
  }

  async abort(): Promise<void> {
    await this.out?.close();
  }

  /** The type's view, made on its first event (`fields`: its decoded object, whose key order JSON keeps). */
  protected abstract view(t: StreamEventType, fields: object, role: TimelineRole, threadInfo: boolean): V;
  /** Before the first event: the process, the clock. */
  protected abstract begin(h: TraceHeader): void;
  /** `trackName` is the track under the slice's thread where the format has such tracks. */
  protected abstract slice(s: Slice, trackName: string): void;
  /** A span, on lane `s.lane` of its thread (0: the thread's own track), with the arrows to draw for it. */
  protected abstract spanSlice(s: SpanSlice, flows: readonly SpanFlow[]): void;
  protected abstract counter(e: BlockEvent, v: V): void;
  protected abstract instant(e: BlockEvent, v: V): void;
  /** A CPU sampler's frame, stack or sample: an instant, in a format without callstack samples. */
  protected cpuSample(e: BlockEvent, v: V): void {
    this.instant(e, v);
  }
  protected abstract drop(d: PlacedDrop): void;
  /** The rundown named a thread (or named it anew). */
  protected abstract renamed(threadId: number, timestampNs: number): void;
  /** After the last event: the metadata (losses, header, damage). */
  protected abstract end(end: ExportEnd): void;
}
