import { isMainThread, workerThreads, workerThreadsLoaded } from '../schema/this-thread.js';
import type { SessionDescriptor } from './session-descriptor.js';
import { threadSessions } from './thread-sessions.js';
import { CONTROL_CHANNEL as CHANNEL } from './control-names.js';
import { publishedSessions, publishSessions } from './published-sessions.js';
import { onChannelData } from './channel-data.js';

/**
 * How worker threads learn about sessions the main thread owns: workers created after a session
 * started find it published at once (published-sessions.ts); workers that exist already hear of it on
 * a process-wide broadcast channel (when their event loop turns; until then their buffers detach on
 * their own when they find the session stopped).
 */
type ControlMessage =
  | { readonly type: 'open'; readonly desc: SessionDescriptor }
  | { readonly type: 'close'; readonly id: number }
  | { readonly type: 'hello' };

const active = new Map<number, SessionDescriptor>();
let channel: import('node:worker_threads').BroadcastChannel | undefined;

/**
 * The process-wide channel, made on first use. On the main thread that is the first session's open
 * or close once node:worker_threads has loaded (tellWorkers), after the session's first events. A
 * worker's hello sent earlier goes unheard, but then no session was open to tell it of, or it found
 * them published, and the open that follows reaches it.
 */
function controlChannel(): import('node:worker_threads').BroadcastChannel {
  if (channel) return channel;
  channel = new (workerThreads().BroadcastChannel)(CHANNEL);
  onChannelData(channel, (data) => {
    const msg = data as ControlMessage;
    if (!msg || typeof msg !== 'object') return;
    if (isMainThread()) {
      if (msg.type === 'hello') for (const desc of active.values()) controlChannel().postMessage({ type: 'open', desc } satisfies ControlMessage);
      return;
    }
    if (msg.type === 'open') threadSessions.open(msg.desc);
    else if (msg.type === 'close') threadSessions.close(msg.id);
  });
  // Never keep a process alive just to hear about sessions.
  (channel as unknown as { unref(): void }).unref();
  return channel;
}

/**
 * A worker thread joins the sessions that run: those its environment data names at once, the others
 * when the main thread answers its hello. Called once the session machinery has loaded, not while it
 * loads: joining loads the providers' machinery, which imports it.
 */
export function joinRunningSessions(): void {
  if (isMainThread()) return;
  for (const desc of publishedSessions()) threadSessions.open(desc);
  controlChannel().postMessage({ type: 'hello' } satisfies ControlMessage);
}

let awaitingWorker = false;

/**
 * Tells the worker threads that exist. On the main thread, none does before node:worker_threads has
 * loaded (a worker is made only through it), and those made later find the sessions published: its
 * channel, and worker_threads with it, wait until the first worker is made. Then environment data
 * carries the sessions to the workers made after it, and the channel answers the hello of one that
 * could not read the published list (no addon in it, or another copy of tracepipe without one): it
 * joins as it hears the answer, its events from then on recorded.
 */
function tellWorkers(msg: ControlMessage): void {
  if (channel === undefined && isMainThread() && !workerThreadsLoaded()) {
    if (!awaitingWorker) {
      awaitingWorker = true;
      process.once('worker', () => {
        publishSessions([...active.values()]);
        controlChannel();
      });
    }
    return;
  }
  controlChannel().postMessage(msg);
}

/**
 * The session's drain is starting: this thread (the owner) writes into it already, its events waiting
 * in the buffers; providers and other threads hear of it from announceOpen, once the drain runs.
 */
export function announceStarting(desc: SessionDescriptor): void {
  threadSessions.open(desc, false);
}

export function announceOpen(desc: SessionDescriptor): void {
  active.set(desc.id, desc);
  publishSessions([...active.values()]);
  threadSessions.open(desc);
  tellWorkers({ type: 'open', desc });
}

export function announceClose(id: number): void {
  active.delete(id);
  publishSessions([...active.values()]);
  threadSessions.close(id);
  tellWorkers({ type: 'close', id });
}
