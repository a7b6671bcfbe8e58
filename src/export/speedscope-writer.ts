import { CpuProfileBuilder, type CpuProfile, frameName, NO_FRAME, type ThreadSamples, UNRESOLVED_FRAME, UNRESOLVED_STACK } from '../analysis/cpu-profile.js';
import { sourceMapNotes } from '../analysis/source-maps.js';
import type { TraceHeader } from '../format/stream-header.js';
import type { EventBatch } from '../format/trace-reader.js';
import { tracepipeVersion } from '../session/version.js';
import { ExportOutput, FLUSH_BYTES } from './export-output.js';
import { type ExportEnd, type ExportFiles, ExportInputError, type ExportWriter } from './export-writer.js';
import { JsonWriter } from './json-text.js';
import { isThreadInfo, ThreadNames } from './runtime-view.js';
import { processLabel } from '../format/stream-header.js';

const SCHEMA = 'https://www.speedscope.app/file-format-schema.json';

/**
 * speedscope's file format (its `file-format-schema.json`): one "sampled" profile per sampled thread,
 * named as the timelines name threads, each sample a stack of indexes into the shared frames (the
 * outermost first, as speedscope reads them) weighted by the time it stands for, in nanoseconds. The
 * profile is the one every view shows (CpuProfileBuilder.finishForViews: source maps applied), so
 * speedscope's frames and its self and total times are `report`'s.
 *
 * A profile holds its thread's samples together, and the stream interleaves threads, so the samples
 * are kept (in the builder: about 12 bytes each, frames and stacks once) until the input ends; the
 * output is then written out in FLUSH_BYTES pieces, never held whole.
 */
export class SpeedscopeWriter implements ExportWriter {
  private readonly cpu = new CpuProfileBuilder();
  private header: TraceHeader | undefined;
  private threads = new ThreadNames(0);

  constructor(private readonly path: string) {}

  write(batch: EventBatch): void {
    if (!this.header) {
      this.header = batch.header;
      this.threads = new ThreadNames(batch.header.pid);
    }
    for (const e of batch.events) {
      if (!this.cpu.add(e) && isThreadInfo(e.type)) this.threads.observe(e);
    }
  }

  async finish(_end: ExportEnd): Promise<ExportFiles> {
    const profile = this.cpu.finishForViews();
    const sampled = [...profile.threads.values()].filter((t) => t.timestampNs.length > 0).sort((a, b) => a.thread - b.thread);
    // Nothing is written: an empty profile would only look like a program that never ran.
    if (sampled.length === 0) throw new ExportInputError('the trace has no CPU samples (no Runtime.CpuSampler/Sample events): record it with the provider Runtime.CpuSampler (tracepipe collect --profile cpu)');
    const out = await ExportOutput.create(this.path);
    try {
      await new ProfileText(out, profile).write(this.header!, sampled, this.threads);
    } finally {
      await out.close();
    }
    return { path: this.path, files: 1, bytes: out.bytes, notes: notes(profile) };
  }

  async abort(): Promise<void> {
    // Nothing is open before finish.
  }
}

/** The file's text, written out whenever FLUSH_BYTES are waiting. */
class ProfileText {
  private readonly w = new JsonWriter(FLUSH_BYTES + (64 << 10));
  /** A stack's frames, innermost first, reused for every sample. */
  private frames = new Int32Array(64);

  constructor(
    private readonly out: ExportOutput,
    private readonly profile: CpuProfile,
  ) {}

  async write(h: TraceHeader, sampled: readonly ThreadSamples[], names: ThreadNames): Promise<void> {
    const w = this.w;
    // speedscope opens on the profile named here: the thread that was sampled the longest.
    const active = sampled.reduce((best, t, i) => (sum(t.weightNs) > sum(sampled[best]!.weightNs) ? i : best), 0);
    w.ascii(`{"$schema":"${SCHEMA}","name":`);
    w.text(processLabel(h));
    w.ascii(',"exporter":');
    w.text(`tracepipe ${tracepipeVersion()}`);
    w.ascii(`,"activeProfileIndex":${active},"profiles":[`);
    for (const [i, t] of sampled.entries()) {
      w.ascii(i === 0 ? '\n{"type":"sampled","name":' : ',\n{"type":"sampled","name":');
      w.text(names.name(t.thread));
      w.ascii(',"unit":"nanoseconds","startValue":');
      const last = t.timestampNs.length - 1;
      w.number(t.timestampNs[0]!);
      w.ascii(',"endValue":');
      w.number(t.timestampNs[last]! + t.weightNs[last]!);
      w.ascii(',"samples":[');
      for (let s = 0; s <= last; s++) {
        if (s > 0) w.ascii(',');
        this.stack(t.stack[s]!);
        if (w.pos >= FLUSH_BYTES) await this.flush();
      }
      w.ascii('],"weights":[');
      for (let s = 0; s <= last; s++) {
        if (s > 0) w.ascii(',');
        w.number(t.weightNs[s]!);
        if (w.pos >= FLUSH_BYTES) await this.flush();
      }
      w.ascii(']}');
    }
    w.ascii('\n],"shared":{"frames":[');
    for (const [i, f] of this.profile.frames.entries()) {
      w.ascii(i === 0 ? '\n{"name":' : ',\n{"name":');
      w.text(frameName(f));
      if (f.url !== '') {
        w.ascii(',"file":');
        w.text(f.url);
      }
      if (f.line > 0) w.ascii(`,"line":${f.line}`);
      if (f.column > 0) w.ascii(`,"col":${f.column}`);
      w.ascii('}');
      if (w.pos >= FLUSH_BYTES) await this.flush();
    }
    // Unresolved samples stand on a frame of their own, after the profile's (see stack()).
    if (this.profile.unresolvedSamples > 0) w.ascii(`${this.profile.frames.length > 0 ? ',' : ''}\n{"name":${JSON.stringify(UNRESOLVED_FRAME)}}`);
    w.ascii('\n]}}\n');
    await this.flush();
  }

  /** A sample's stack: its frame indexes, the outermost first (none for a sample of no frame). */
  private stack(stack: number): void {
    const w = this.w;
    if (stack === NO_FRAME) return w.ascii('[]');
    if (stack === UNRESOLVED_STACK) return w.ascii(`[${this.profile.frames.length}]`);
    const { stackFrame, stackParent } = this.profile;
    let depth = 0;
    for (let s = stack; s >= 0; s = stackParent[s]!) {
      if (depth === this.frames.length) {
        const grown = new Int32Array(depth * 2);
        grown.set(this.frames);
        this.frames = grown;
      }
      this.frames[depth++] = stackFrame[s]!;
    }
    w.ascii('[');
    for (let i = depth - 1; i >= 0; i--) {
      w.integer(this.frames[i]!);
      if (i > 0) w.ascii(',');
    }
    w.ascii(']');
  }

  private async flush(): Promise<void> {
    await this.out.write(this.w.buf.subarray(0, this.w.pos));
    this.w.pos = 0;
  }
}

const samples = (n: number): string => `${n} sample${n === 1 ? '' : 's'}`;

function sum(a: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]!;
  return s;
}

/** What the summary says beside the file: samples the profile could not show as they were. */
function notes(profile: CpuProfile): string[] {
  const out: string[] = [];
  if (profile.unresolvedSamples > 0) {
    out.push(`${samples(profile.unresolvedSamples)} whose stack the trace does not define (its definition was not recorded, e.g. it left a flight recorder's ring) shown as "${UNRESOLVED_FRAME}"`);
  }
  const lost = Object.entries(profile.lost);
  if (lost.length > 0) out.push(`the sampler lost ${samples(lost.reduce((n, [, c]) => n + c, 0))} before writing them (${lost.map(([why, c]) => `${why}: ${c}`).join(', ')})`);
  if (profile.restarts > 0) out.push(`the sampler was restarted ${profile.restarts} time${profile.restarts === 1 ? '' : 's'} (a profiler that stopped producing samples)`);
  if (profile.sourceMaps) out.push(...sourceMapNotes(profile.sourceMaps));
  return out;
}
