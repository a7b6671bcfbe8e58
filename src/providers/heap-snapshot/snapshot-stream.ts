import { createRequire } from 'node:module';
import type { Session } from 'node:inspector';
import { loadNativeAddon } from '../../session/native-addon.js';
import { NO_TOTALS, type ParseTotals, readSnapshotHeader, SnapshotJsonParser, type SnapshotOutput } from './snapshot-json-parser.js';
import { errorMessage } from '../../schema/error-message.js';

const require = createRequire(import.meta.url);

/** What the addon's transcoder read, and why the JSON was not whole and well-formed ('' when it was). */
export interface TranscodeResult extends ParseTotals {
  readonly error: string;
}

/**
 * The header's JSON text: the record layout [nodeWidth, edgeWidth, toNodeColumn, locationWidth,
 * objectIndexColumn], why the header is invalid, or false to stop.
 */
export type HeaderCallback = (json: string) => number[] | string | false;
/**
 * A batch of bulk payloads: row i of `table` is [section (0 nodes, 1 edges, 2 locations, 3 strings),
 * first, count, end], its bytes `bytes[end of row i-1 .. end)`. Valid during the call only; returns
 * whether to go on.
 */
export type PayloadsCallback = (bytes: Uint8Array, table: Float64Array, rows: number) => boolean;

/** The heap snapshot stream of tracepipe's native addon (native/gc-hook/heap_snapshot.cc). */
export interface HeapSnapshotAddon {
  /**
   * Takes a heap snapshot of this thread's isolate and hands V8's JSON to `onChunk`, chunk by chunk,
   * as bytes valid only during the call; `onChunk` returning false stops it. The snapshot is deleted
   * in every case. Returns false when stopped; rethrows what `onChunk` threw.
   */
  takeHeapSnapshot(onChunk: (chunk: Uint8Array) => boolean): boolean;
  /**
   * Takes a heap snapshot of this thread's isolate and transcodes V8's JSON, as V8 serializes it,
   * into the bulk payloads SnapshotJsonParser makes of it (native/gc-hook/snapshot_transcoder.cc).
   * The snapshot is deleted in every case; rethrows what a callback threw.
   */
  transcodeHeapSnapshot(onHeader: HeaderCallback, onPayloads: PayloadsCallback): TranscodeResult;
  /** The same transcoder on JSON given chunk by chunk. */
  transcodeJson(chunks: readonly Uint8Array[], onHeader: HeaderCallback, onPayloads: PayloadsCallback): TranscodeResult;
}

const loaded = loadNativeAddon<HeapSnapshotAddon>('heap_snapshot');

/**
 * Where V8's snapshot JSON comes from. `addon`: V8's chunks as bytes, straight from
 * `HeapSnapshot::Serialize`. `inspector`: `HeapProfiler.takeHeapSnapshot`, whose chunks V8 wraps in
 * protocol messages that Node parses back into strings (the fallback; it costs the target a longer pause).
 */
export type SnapshotRoute = 'addon' | 'inspector';

/** The route this process takes: the addon when it loaded. */
export const snapshotRoute: SnapshotRoute = loaded.addon ? 'addon' : 'inspector';
/** Why this process takes snapshots through the inspector though the addon was not turned off. */
export const snapshotAddonMissing = loaded.missing;

/**
 * The addon transcoder's callbacks for `out`: the header read as the JavaScript parser reads it,
 * payloads written in order. An exception in `out` stops the transcoder and is kept in `failed()`.
 */
export function transcoderCallbacks(out: SnapshotOutput, wanted: () => boolean): { onHeader: HeaderCallback; onPayloads: PayloadsCallback; failed: () => string } {
  let failed = '';
  const guard = <T>(f: () => T): T | false => {
    try {
      return f();
    } catch (e) {
      failed = `the heap snapshot stream failed: ${errorMessage(e)}`;
      return false;
    }
  };
  const sections = [out.nodes, out.edges, out.locations, out.strings];
  const onHeader: HeaderCallback = (json) =>
    guard(() => {
      const read = readSnapshotHeader(json);
      if (typeof read === 'string') return read;
      out.header(read.header, json);
      const l = read.layout;
      return [l.nodeWidth, l.edgeWidth, l.toNodeColumn, l.locationWidth, l.objectIndexColumn];
    });
  const onPayloads: PayloadsCallback = (bytes, table, rows) =>
    guard(() => {
      for (let r = 0, start = 0; r < rows; r++) {
        const end = table[r * 4 + 3]!;
        sections[table[r * 4]!]!(table[r * 4 + 1]!, table[r * 4 + 2]!, bytes.subarray(start, end));
        start = end;
      }
      return wanted();
    });
  return { onHeader, onPayloads, failed: () => failed };
}

/**
 * Takes a heap snapshot of this thread's isolate and writes it to `out` as V8 produces it, each
 * chunk of V8's JSON turned into bulk payloads and written before the next exists (a Block session
 * parks the writes inside; V8 waits): through the addon, transcoded in C++; through the inspector, by
 * SnapshotJsonParser. The payloads are the same either way. Once `wanted()` is false or the JSON is
 * malformed, the rest is not read (the addon stops V8 there). `done` gets '' or why the snapshot could
 * not be taken or read, and what was read: synchronously through the addon, maybe later through the
 * inspector (V8 13 takes it in a task of its own).
 */
export function streamHeapSnapshot(out: SnapshotOutput, wanted: () => boolean, done: (error: string, totals: ParseTotals) => void, route = snapshotRoute): void {
  if (route === 'addon') {
    if (!loaded.addon) return done(`the heap snapshot addon is not in use${loaded.missing ? ` (${loaded.missing})` : ''}`, NO_TOTALS);
    const { onHeader, onPayloads, failed } = transcoderCallbacks(out, wanted);
    let r: TranscodeResult;
    try {
      r = loaded.addon.transcodeHeapSnapshot(onHeader, onPayloads);
    } catch (e) {
      return done(`the heap snapshot stream failed: ${errorMessage(e)}`, NO_TOTALS);
    }
    const { error, ...totals } = r;
    return done(failed() || error, totals);
  }
  const parser = new SnapshotJsonParser(out);
  const parsing = (): boolean => wanted() && parser.error === undefined;
  let session: Session;
  try {
    const { Session: InspectorSession } = require('node:inspector') as typeof import('node:inspector');
    session = new InspectorSession();
    session.connect();
  } catch (e) {
    return done(`the inspector is not available: ${errorMessage(e)}`, parser.totals);
  }
  let finished = false;
  let failed = '';
  const onChunk = (m: { params: { chunk: string } }): void => {
    // The inspector cannot be stopped: V8 serializes the rest, unparsed.
    if (finished || failed || !parsing()) return;
    try {
      parser.pushText(m.params.chunk);
    } catch (e) {
      // Not thrown into the inspector's dispatch: reported when V8 is done.
      failed = `the heap snapshot stream failed: ${errorMessage(e)}`;
    }
  };
  const finish = (error: string): void => {
    if (finished) return;
    finished = true;
    // The session may outlive this call: it must not keep the parser (and what it wrote to) alive.
    session.off('HeapProfiler.addHeapSnapshotChunk', onChunk);
    session.disconnect();
    error = failed || error;
    if (!error) parser.finish();
    done(error || parser.error || '', parser.totals);
  };
  session.on('HeapProfiler.addHeapSnapshotChunk', onChunk);
  try {
    session.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false }, (err) => finish(err ? `V8 could not take the snapshot: ${err.message}` : ''));
  } catch (e) {
    finish(`V8 could not take the snapshot: ${errorMessage(e)}`);
  }
}
