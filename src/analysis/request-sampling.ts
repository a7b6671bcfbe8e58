import type { BlockEvent, RawPayload } from '../format/events-block.js';
import { RawPayloads } from '../format/raw-payloads.js';
import type { StreamEventType } from '../format/trace-event.js';

/** What head sampling (Node.Channels' sample=) kept of the server requests a trace saw. */
export interface RequestSampling {
  /** The fraction of root requests kept. */
  readonly rate: number;
  /** Requests seen and kept, as the sessions said when they stopped (0, 0 when none said). */
  readonly requests: number;
  readonly kept: number;
}

const PROVIDER = 'Node.Channels';
const EVENT = 'RequestSampling';

/**
 * Node.Channels' RequestSampling events of a skimmed trace. Each session writes one as it begins
 * (the rate) and one as it stops (its counts), and every session recording then gets both: per
 * thread the one with the most requests is the longest session's, and threads add up.
 */
export class RequestSamplingTally {
  private readonly raw = new RawPayloads();
  private readonly isSampling = new Map<StreamEventType, boolean>();
  private rate: number | undefined;
  private readonly byThread = new Map<number, { requests: number; kept: number }>();

  skimmed(e: BlockEvent, raw: RawPayload): void {
    let is = this.isSampling.get(e.type);
    if (is === undefined) this.isSampling.set(e.type, (is = e.provider === PROVIDER && e.name === EVENT));
    if (!is) return;
    const f = this.raw.decode(e.type, raw) as { rate: number; requests: number; kept: number };
    this.rate = f.rate;
    const t = this.byThread.get(e.threadId);
    if (t === undefined || f.requests > t.requests) this.byThread.set(e.threadId, { requests: f.requests, kept: f.kept });
  }

  /** Undefined when nothing was sampled. */
  result(): RequestSampling | undefined {
    if (this.rate === undefined) return undefined;
    let requests = 0;
    let kept = 0;
    for (const t of this.byThread.values()) {
      requests += t.requests;
      kept += t.kept;
    }
    return { rate: this.rate, requests, kept };
  }
}
