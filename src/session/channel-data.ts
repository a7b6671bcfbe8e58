import type { BroadcastChannel } from 'node:worker_threads';

type Listener = (data: unknown) => void;
interface PortLike {
  on(event: 'message', listener: Listener): unknown;
  off(event: 'message', listener: Listener): unknown;
}

/** The value of `channel`'s own symbol-keyed property named `name`, if it has one. */
function ownSymbol(channel: object, name: string): unknown {
  const key = Object.getOwnPropertySymbols(channel).find((s) => s.description === name);
  return key === undefined ? undefined : (channel as Record<symbol, unknown>)[key];
}

/**
 * Hears what arrives on `channel` as its data, without making a MessageEvent of each message.
 * Node 22 and 24 make a BroadcastChannel's events with undici's MessageEvent, and its first use loads
 * undici on that thread: 44–47 ms on Node 24 here, on the main thread when the first worker joins a
 * session and on every worker thread when it first hears of one (Node 20 has a small MessageEvent of
 * its own). The channel's handle, a MessagePort in Node 20 to 24, delivers the same data to its own
 * 'message' listeners without an event; the channel's listener on it, which makes the event, comes
 * off. Where a Node release lays the channel out otherwise, the channel's onmessage hears it.
 * Returns what stops hearing it.
 */
export function onChannelData(channel: BroadcastChannel, listener: Listener): () => void {
  const handle = ownSymbol(channel, 'kHandle') as Partial<PortLike> | undefined;
  const eventMaker = ownSymbol(channel, 'kOnMessage');
  if (typeof handle?.on === 'function' && typeof handle.off === 'function' && typeof eventMaker === 'function') {
    // Ours first, then Node's off: the port keeps a listener throughout, so it is never stopped or re-referenced.
    handle.on('message', listener);
    handle.off('message', eventMaker as Listener);
    // The channel's close() takes off only Node's listener: messages queued before it would still reach ours.
    return () => void handle.off!('message', listener);
  }
  channel.onmessage = (ev: unknown) => listener((ev as { data: unknown }).data);
  return () => {
    (channel as { onmessage: unknown }).onmessage = null;
  };
}
