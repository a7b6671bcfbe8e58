import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ByteWriter } from '../format/byte-writer.js';
import type { BlockEvent } from '../format/events-block.js';
import type { TraceHeader } from '../format/stream-header.js';
import type { EventBatch, PlacedDrop } from '../format/trace-reader.js';
import { CTF_MAGIC, ctfFields, ctfMetadata, type CtfEventClass, PACKET_PREAMBLE } from './ctf-metadata.js';
import { EventTables, type EventTable } from './event-tables.js';
import { ExportOutput, prepareDirectory } from './export-output.js';
import type { ExportEnd, ExportFiles, ExportWriter } from './export-writer.js';
import { isThreadInfo, ThreadNames } from './runtime-view.js';

/** A packet is closed once its content passes this size (LTTng's sub-buffers are of this order). */
const PACKET_BYTES = 64 << 10;
/** A stream's closed packets go to its file once they pass this size. */
const STREAM_FLUSH_BYTES = 256 << 10;
const TWO32 = 4294967296;
const encoder = new TextEncoder();

/** One thread's stream file: closed packets, then the open one, in one buffer. */
interface CtfStream {
  readonly threadId: number;
  readonly out: ExportOutput;
  readonly w: ByteWriter;
  /** Where the open packet starts, or -1. */
  packetStart: number;
  packetEvents: number;
  firstTs: number;
  lastTs: number;
  seq: number;
  /** Events this thread lost so far: the next packet's events_discarded. */
  discarded: number;
  /** events_discarded of the last packet written: a final packet carries what came after it. */
  reported: number;
  /** Losses revealed (in stream order) whose revealing event is not written yet (timestamp order). */
  drops: PlacedDrop[];
}

function setU64(w: ByteWriter, at: number, v: number): void {
  w.view.setUint32(at, v % TWO32, true);
  w.view.setUint32(at + 4, Math.floor(v / TWO32), true);
}

/**
 * A CTF 1.8 trace directory that babeltrace2 (and so Trace Compass) reads: `metadata` (TSDL, see
 * ctf-metadata.ts) and one stream file per thread, `stream-<threadId>`, in packets of about 64 KiB.
 * Each event keeps its fields in declaration order and their real types. A thread's losses raise its
 * packets' `events_discarded` at the event that revealed them, so readers report them in place.
 * Written in timestamp order, as a CTF stream must be.
 */
export class CtfWriter implements ExportWriter {
  readonly order = 'timestamp';
  private header: TraceHeader | undefined;
  private readonly tables = new EventTables();
  private readonly classes = new Map<EventTable, CtfEventClass>();
  private readonly streams = new Map<number, CtfStream>();
  private threads = new ThreadNames(0);
  private clamped = 0;
  private withNul = 0;

  constructor(private readonly dir: string) {}

  async write(batch: EventBatch): Promise<void> {
    if (!this.header) {
      await prepareDirectory(this.dir);
      this.header = batch.header;
      this.threads = new ThreadNames(batch.header.pid);
    }
    for (const d of batch.drops) (this.streams.get(d.threadId) ?? (await this.stream(d.threadId))).drops.push(d);
    for (const e of batch.events) this.event(this.streams.get(e.threadId) ?? (await this.stream(e.threadId)), e);
    for (const s of this.streams.values()) {
      const closed = s.packetStart < 0 ? s.w.pos : s.packetStart;
      if (closed >= STREAM_FLUSH_BYTES) await this.flush(s);
    }
  }

  private async stream(threadId: number): Promise<CtfStream> {
    const s: CtfStream = {
      threadId, out: await ExportOutput.create(join(this.dir, `stream-${threadId}`)), w: new ByteWriter(PACKET_BYTES * 2),
      packetStart: -1, packetEvents: 0, firstTs: 0, lastTs: 0, seq: 0, discarded: 0, reported: 0, drops: [],
    };
    this.threads.name(threadId);
    this.streams.set(threadId, s);
    return s;
  }

  private classOf(e: BlockEvent): CtfEventClass {
    const [table, fresh] = this.tables.tableOf(e.type);
    if (!fresh) return this.classes.get(table)!;
    const d = e.type.descriptor;
    const c: CtfEventClass = { id: this.classes.size, name: `${d.provider}:${d.name}`, level: d.level, fields: ctfFields(table.columns.map((col) => col.field)) };
    this.classes.set(table, c);
    return c;
  }

  private event(s: CtfStream, e: BlockEvent): void {
    if (s.drops.length > 0) this.applyDrops(s, e.sequence);
    const c = this.classOf(e);
    // A CTF clock counts up from its offset (the trace origin) and a stream's events never go back.
    let ts = e.timestampNs;
    if (ts < 0 || ts < s.lastTs) {
      ts = Math.max(0, s.lastTs);
      this.clamped++;
    }
    if (s.packetStart < 0) this.openPacket(s, ts);
    const w = s.w;
    w.ensure(12);
    w.view.setUint32(w.pos, c.id, true);
    setU64(w, w.pos + 4, ts);
    w.pos += 12;
    const f = e.fields;
    for (const { field } of c.fields) {
      const v = f[field.name]!;
      switch (field.type) {
        case 'bool': w.u8(v ? 1 : 0); break;
        case 'u8': case 'i8': w.u8((v as number) & 0xff); break;
        case 'u16': case 'i16': w.u16((v as number) & 0xffff); break;
        case 'u32': case 'i32': w.u32((v as number) >>> 0); break;
        case 'f32': w.ensure(4); w.view.setFloat32(w.pos, v as number, true); w.pos += 4; break;
        case 'f64': w.f64(v as number); break;
        case 'u64': case 'i64': w.u64(v as bigint); break;
        case 'string': {
          const str = v as string;
          if (str.includes('\0')) this.withNul++;
          w.ensure(str.length * 3 + 1);
          w.pos += encoder.encodeInto(str, w.buf.subarray(w.pos)).written;
          w.buf[w.pos++] = 0;
          break;
        }
        case 'bytes': w.u32((v as Uint8Array).length); w.bytes(v as Uint8Array); break;
      }
    }
    if (isThreadInfo(e.type)) this.threads.observe(e);
    s.lastTs = ts;
    s.packetEvents++;
    if (w.pos - s.packetStart >= PACKET_BYTES) this.closePacket(s);
  }

  /** Losses revealed by an event at or before `sequence` end the packet there; the next one counts them. */
  private applyDrops(s: CtfStream, sequence: number): void {
    let lost = 0;
    s.drops = s.drops.filter((d) => {
      if (d.toSeq >= sequence) return true;
      lost += d.count;
      return false;
    });
    if (lost === 0) return;
    if (s.packetStart >= 0) this.closePacket(s);
    s.discarded += lost;
  }

  private openPacket(s: CtfStream, ts: number): void {
    const w = s.w;
    w.ensure(PACKET_PREAMBLE);
    s.packetStart = w.pos;
    s.firstTs = ts;
    s.packetEvents = 0;
    const v = w.view;
    const p = w.pos;
    v.setUint32(p, CTF_MAGIC, true);
    v.setUint32(p + 4, 0, true);
    setU64(w, p + 8, s.threadId);
    setU64(w, p + 16, ts);
    // end, content and packet sizes are filled in when the packet closes
    setU64(w, p + 48, s.seq++);
    setU64(w, p + 56, s.discarded);
    v.setUint32(p + 64, s.threadId, true);
    w.pos += PACKET_PREAMBLE;
    s.reported = s.discarded;
  }

  private closePacket(s: CtfStream): void {
    const w = s.w;
    const p = s.packetStart;
    const bits = (w.pos - p) * 8;
    setU64(w, p + 24, s.lastTs);
    setU64(w, p + 32, bits);
    setU64(w, p + 40, bits);
    s.packetStart = -1;
  }

  private async flush(s: CtfStream): Promise<void> {
    const w = s.w;
    const closed = s.packetStart < 0 ? w.pos : s.packetStart;
    await s.out.write(w.buf.subarray(0, closed));
    w.buf.copyWithin(0, closed, w.pos);
    w.pos -= closed;
    if (s.packetStart >= 0) s.packetStart = 0;
  }

  async finish(_end: ExportEnd): Promise<ExportFiles> {
    let bytes = 0;
    for (const s of this.streams.values()) {
      this.applyDrops(s, Infinity);
      if (s.packetStart >= 0) this.closePacket(s);
      if (s.discarded > s.reported) {
        // Losses after the thread's last event: an empty packet carries the final count.
        this.openPacket(s, s.lastTs);
        this.closePacket(s);
      }
      await this.flush(s);
      await s.out.close();
      bytes += s.out.bytes;
    }
    const names = [...this.streams.keys()].sort((a, b) => a - b).map((id) => [id, this.threads.name(id)] as const);
    const metadata = ctfMetadata(this.header!, [...this.classes.values()], names);
    await writeFile(join(this.dir, 'metadata'), metadata);
    const notes: string[] = [];
    if (this.clamped > 0) notes.push(`${this.clamped} event timestamps were raised to keep their CTF stream monotonic (events before the trace origin, or later than the reorder window)`);
    if (this.withNul > 0) notes.push(`${this.withNul} string fields contain NUL characters; CTF strings end there`);
    return { path: this.dir, files: this.streams.size + 1, bytes: bytes + Buffer.byteLength(metadata), ...(notes.length ? { notes } : {}) };
  }

  async abort(): Promise<void> {
    for (const s of this.streams.values()) await s.out.close();
  }
}
