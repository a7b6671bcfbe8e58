import { createRequire } from 'node:module';
import type { Session } from 'node:inspector';
import { loadNativeAddon } from '../native-addon.js';
import type { SnapshotJsonParser } from './snapshot-json-parser.js';

const require = createRequire(import.meta.url);

/** The heap snapshot stream of tracepipe's native addon (native/gc-hook/heap_snapshot.cc). */
interface HeapSnapshotAddon {
  /**
   * Takes a heap snapshot of this thread's isolate and hands V8's JSON to `onChunk`, chunk by chunk,
   * as bytes valid only during the call; `onChunk` returning false stops it. The snapshot is deleted
   * in every case. Returns false when stopped; rethrows what `onChunk` threw.
   */
  takeHeapSnapshot(onChunk: (chunk: Uint8Array) => boolean): boolean;
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
 * Takes a heap snapshot of this thread's isolate and feeds V8's JSON to `parser` as V8 produces it,
 * each chunk parsed before the next exists (a Block session parks the writes inside; V8 waits). Once
 * `wanted()` is false or the parser failed, the rest is not parsed (the addon stops V8 there). `done`
 * gets '' or why the snapshot could not be taken: synchronously through the addon, maybe later
 * through the inspector (V8 13 takes it in a task of its own).
 */
export function streamHeapSnapshot(parser: SnapshotJsonParser, wanted: () => boolean, done: (error: string) => void, route = snapshotRoute): void {
  const parsing = (): boolean => wanted() && parser.error === undefined;
  if (route === 'addon') {
    if (!loaded.addon) return done(`the heap snapshot addon is not in use${loaded.missing ? ` (${loaded.missing})` : ''}`);
    let error = '';
    try {
      loaded.addon.takeHeapSnapshot((chunk) => {
        if (!parsing()) return false;
        parser.push(chunk);
        return true;
      });
    } catch (e) {
      error = `the heap snapshot stream failed: ${(e as Error).message}`;
    }
    return done(error);
  }
  let session: Session;
  try {
    const { Session: InspectorSession } = require('node:inspector') as typeof import('node:inspector');
    session = new InspectorSession();
    session.connect();
  } catch (e) {
    return done(`the inspector is not available: ${(e as Error).message}`);
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
      failed = `the heap snapshot stream failed: ${(e as Error).message}`;
    }
  };
  const finish = (error: string): void => {
    if (finished) return;
    finished = true;
    // The session may outlive this call: it must not keep the parser (and what it wrote to) alive.
    session.off('HeapProfiler.addHeapSnapshotChunk', onChunk);
    session.disconnect();
    done(failed || error);
  };
  session.on('HeapProfiler.addHeapSnapshotChunk', onChunk);
  try {
    session.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false }, (err) => finish(err ? `V8 could not take the snapshot: ${err.message}` : ''));
  } catch (e) {
    finish(`V8 could not take the snapshot: ${(e as Error).message}`);
  }
}
