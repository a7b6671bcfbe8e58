import { join } from 'node:path';
import { ByteWriter } from '../format/byte-writer.js';
import type { BlockEvent } from '../format/events-block.js';
import type { TraceHeader } from '../format/stream-header.js';
import type { EventBatch, PlacedDrop } from '../format/trace-reader.js';
import { CTF_MAGIC, ctfFields, ctfMetadata, type CtfEventClass, PACKET_PREAMBLE } from './ctf-metadata.js';
import { EventTables, type EventTable } from './event-tables.js';
import { ExportOutput, FLUSH_BYTES, prepareDirectory } from './export-output.js';
import { OldestEntry } from '../format/oldest-entry.js';
import type { ExportEnd, ExportFiles, ExportWriter } from './export-writer.js';
import { isThreadInfo, ThreadNames } from './runtime-view.js';

/** A packet is closed once its content passes this size (LTTng's sub-buffers are of this order). */
const PACKET_BYTES = 64 << 10;
/** A stream's buffer to start with, and to go back to after a write that had grown it past its share. */
const STREAM_BUFFER_BYTES = 4 << 10;
/** Stream files open at once: the least recently written is closed past this, and reopened to append. */
const MAX_OPEN_FILES = 64;
/** Lanes per thread at most: an event earlier than the last of each goes on the one whose last is earliest, at that time. */
const MAX_LANES = 16;
const TWO32 = 4294967296;
const encoder = new TextEncoder();

/** One stream file: closed packets, then the open one, in one buffer. */
interface CtfStream {
  readonly threadId: number;
  /** Thread id, plus lane × 2^32 for a thread's later lanes. */
  readonly instanceId: number;
  readonly path: string;
  /** Whether the file exists: the first write creates it, later ones append. */
  created: boolean;
  w: ByteWriter;
  /** Where the open packet starts, or -1. */
  packetStart: number;
  lastTs: number;
  seq: number;
  /** Events the thread lost so far: the next packet's events_discarded (lane 0 only). */
  discarded: number;
  /** events_discarded of the last packet opened: a final packet carries what came after it. */
  reported: number;
}

/** A thread's streams ("lanes") and its losses waiting for the event that revealed them. */
interface CtfThread {
  readonly lanes: CtfStream[];
  drops: PlacedDrop[];
}

function setU64(w: ByteWriter, at: number, v: number): void {
  w.view.setUint32(at, v % TWO32, true);
  w.view.setUint32(at + 4, Math.floor(v / TWO32), true);
}

/**
 * A CTF 1.8 trace directory that babeltrace2 (and so Trace Compass) reads: `metadata` (TSDL, see
 * ctf-metadata.ts) and stream files of packets of up to 64 KiB, each event with its fields in
 * declaration order and their real types.
 *
 * A CTF stream must never go back in time, but a thread's events come in sequence order and some are
 * stamped earlier than the ones before them (a GC pause is written after it ends, with its true
 * start). Rather than hold the trace back to sort it, each thread has lanes: `stream-<thread>` takes
 * the events in order, and an event earlier than a lane's last goes to the next lane that can take it
 * (`stream-<thread>.1`, …; usually one or two). All lanes carry the thread id in their packet
 * context; babeltrace2 merges streams by time. A thread's losses raise `events_discarded` of its
 * first lane at the event that revealed them, so readers report them in place.
 *
 * Bounded whatever the number of threads: once FLUSH_BYTES wait in all streams' buffers, the fullest
 * streams close their packet and are written out until half that is left, and at most MAX_OPEN_FILES
 * files are open (the least recently written closed, and reopened to append).
 */
export class CtfWriter implements ExportWriter {
  private header: TraceHeader | undefined;
  private readonly tables = new EventTables();
  private readonly classes = new Map<EventTable, CtfEventClass>();
  private readonly threads = new Map<number, CtfThread>();
  private readonly streams: CtfStream[] = [];
  private readonly open = new Map<CtfStream, ExportOutput>();
  private readonly leastRecent = new OldestEntry(this.open);
  private bytes = 0;
  private names = new ThreadNames(0);
  private clamped = 0;
  /** Events put later than stamped: earlier than every lane of their thread could take. */
  private delayed = 0;
  private withNul = 0;

  constructor(private readonly dir: string) {}

  async write(batch: EventBatch): Promise<void> {
    if (!this.header) {
      await prepareDirectory(this.dir);
      this.header = batch.header;
      this.names = new ThreadNames(batch.header.pid);
    }
    for (const d of batch.drops) (this.threads.get(d.threadId) ?? this.thread(d.threadId)).drops.push(d);
    for (const e of batch.events) {
      const t = this.threads.get(e.threadId) ?? this.thread(e.threadId);
      if (t.drops.length > 0) this.applyDrops(t, e.sequence);
      // A CTF clock counts up from its offset, the trace origin.
      let ts = e.timestampNs;
      if (ts < 0) {
        ts = 0;
        this.clamped++;
      }
      let lane = t.lanes[0]!;
      if (ts < lane.lastTs) {
        const free = t.lanes.find((l) => ts >= l.lastTs);
        if (free) lane = free;
        else if (t.lanes.length < MAX_LANES) lane = this.lane(t, e.threadId);
        else {
          lane = t.lanes.reduce((a, b) => (b.lastTs < a.lastTs ? b : a));
          ts = lane.lastTs;
          this.delayed++;
        }
      }
      this.event(lane, e, ts);
    }
    let buffered = 0;
    for (const s of this.streams) buffered += s.w.pos;
    if (buffered >= FLUSH_BYTES) {
      // The fullest first, so each write is as large as it can be.
      for (const s of this.streams.filter((x) => x.w.pos > 0).sort((a, b) => b.w.pos - a.w.pos)) {
        if (buffered <= FLUSH_BYTES / 2) break;
        buffered -= s.w.pos;
        if (s.packetStart >= 0) this.closePacket(s);
        await this.flush(s);
      }
    }
  }

  private thread(threadId: number): CtfThread {
    const t: CtfThread = { lanes: [], drops: [] };
    this.threads.set(threadId, t);
    this.names.name(threadId);
    this.lane(t, threadId);
    return t;
  }

  /** A new lane of `t`; its file is made at its first write. */
  private lane(t: CtfThread, threadId: number): CtfStream {
    const n = t.lanes.length;
    const file = n === 0 ? `stream-${threadId}` : `stream-${threadId}.${n}`;
    const s: CtfStream = {
      threadId, instanceId: threadId + n * TWO32, path: join(this.dir, file), created: false, w: new ByteWriter(STREAM_BUFFER_BYTES),
      packetStart: -1, lastTs: 0, seq: 0, discarded: 0, reported: 0,
    };
    t.lanes.push(s);
    this.streams.push(s);
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

  private event(s: CtfStream, e: BlockEvent, ts: number): void {
    const c = this.classOf(e);
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
    if (isThreadInfo(e.type)) this.names.observe(e);
    s.lastTs = ts;
    if (w.pos - s.packetStart >= PACKET_BYTES) this.closePacket(s);
  }

  /** Losses revealed by an event at or before `sequence` end the first lane's packet there; its next one counts them. */
  private applyDrops(t: CtfThread, sequence: number): void {
    let lost = 0;
    let n = 0;
    for (; n < t.drops.length && t.drops[n]!.toSeq < sequence; n++) lost += t.drops[n]!.count;
    if (n === 0) return;
    t.drops = t.drops.slice(n);
    const s = t.lanes[0]!;
    if (s.packetStart >= 0) this.closePacket(s);
    s.discarded += lost;
  }

  private openPacket(s: CtfStream, ts: number): void {
    const w = s.w;
    w.ensure(PACKET_PREAMBLE);
    s.packetStart = w.pos;
    const v = w.view;
    const p = w.pos;
    v.setUint32(p, CTF_MAGIC, true);
    v.setUint32(p + 4, 0, true);
    setU64(w, p + 8, s.instanceId);
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

  /** Writes out a stream's closed packets, opening its file (and closing the least recently written past MAX_OPEN_FILES). */
  private async flush(s: CtfStream): Promise<void> {
    let out = this.open.get(s);
    if (out) this.open.delete(s);
    else {
      if (this.open.size >= MAX_OPEN_FILES) await this.leastRecent.take()![1].close();
      out = s.created ? await ExportOutput.append(s.path) : await ExportOutput.createNew(s.path);
      s.created = true;
    }
    // Last in the map: the most recently written.
    this.open.set(s, out);
    const w = s.w;
    const closed = s.packetStart < 0 ? w.pos : s.packetStart;
    await out.write(w.buf.subarray(0, closed));
    this.bytes += closed;
    w.buf.copyWithin(0, closed, w.pos);
    w.pos -= closed;
    if (s.packetStart >= 0) s.packetStart = 0;
    // A buffer grown past its share of the budget starts small again (with few streams, it is kept).
    if (w.pos === 0 && w.buf.length > Math.max(STREAM_BUFFER_BYTES, (2 * FLUSH_BYTES) / this.streams.length)) s.w = new ByteWriter(STREAM_BUFFER_BYTES);
  }

  private async closeAll(): Promise<void> {
    for (let e = this.leastRecent.take(); e; e = this.leastRecent.take()) await e[1].close();
  }

  async finish(_end: ExportEnd): Promise<ExportFiles> {
    for (const t of this.threads.values()) {
      this.applyDrops(t, Infinity);
      const s = t.lanes[0]!;
      if (s.discarded > s.reported) {
        // Losses after the thread's last event: an empty packet carries the final count.
        if (s.packetStart >= 0) this.closePacket(s);
        this.openPacket(s, s.lastTs);
      }
    }
    for (const s of this.streams) {
      if (s.packetStart >= 0) this.closePacket(s);
      if (s.w.pos > 0 || !s.created) await this.flush(s);
    }
    await this.closeAll();
    const bytes = this.bytes;
    const names = [...this.threads.keys()].sort((a, b) => a - b).map((id) => [id, this.names.name(id)] as const);
    const metadata = ctfMetadata(this.header!, [...this.classes.values()], names);
    const out = await ExportOutput.createNew(join(this.dir, 'metadata'));
    try {
      await out.write(metadata);
    } finally {
      await out.close();
    }
    const notes: string[] = [];
    if (this.clamped > 0) notes.push(`${this.clamped} events stamped before the trace origin were put at the origin (a CTF clock cannot go below its offset)`);
    if (this.withNul > 0) notes.push(`${this.withNul} string fields contain NUL characters; CTF strings end there`);
    if (this.delayed > 0) notes.push(`${this.delayed} events stamped earlier than each of their thread's ${MAX_LANES} streams could take were put at the last time of one (a CTF stream never goes back in time)`);
    return { path: this.dir, files: this.streams.length + 1, bytes: bytes + Buffer.byteLength(metadata), ...(notes.length ? { notes } : {}) };
  }

  async abort(): Promise<void> {
    await this.closeAll();
  }
}
