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
  /**
   * From the kept requests' counts to an estimate for all requests: requests / kept as the sessions
   * counted them, else 1 / rate; null when nothing was kept (no estimate can be made).
   */
  readonly factor: number | null;
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
    const factor = requests > 0 ? (kept > 0 ? requests / kept : null) : this.rate > 0 ? 1 / this.rate : null;
    return { rate: this.rate, requests, kept, factor };
  }
}

/** The span at the root of every request tree: a server request's (Node.Channels' HttpServer). */
const REQUEST_ROOT = 'Node.Channels/HttpServer';
/** Request trees' span ids remembered, the newest: a child begun this many request spans after its parent ended counts as outside. */
const REMEMBERED = 65_536;

/**
 * Which spans belong to a request tree (a server request's span and everything begun under it): head
 * sampling keeps or leaves out these trees whole, while every other span (a timer's, a queue
 * consumer's) is recorded. So only request trees' counts are scaled to estimate all of them. A child
 * may begin after its parent ended (work the handler left running), so ids are kept past their end:
 * the newest REMEMBERED of them, a bounded memory.
 */
export class RequestTrees<Id extends number | bigint> {
  private readonly ids = new Set<Id>();

  /** A span begins: whether it is in a request tree. */
  begin(id: Id, parentId: Id, span: string): boolean {
    if (span !== REQUEST_ROOT && !this.ids.has(parentId)) return false;
    this.ids.add(id);
    if (this.ids.size > REMEMBERED) this.ids.delete(this.ids.values().next().value as Id);
    return true;
  }

  /** Whether a span begun earlier is in a request tree (false once REMEMBERED newer ones began). */
  has(id: Id): boolean {
    return this.ids.has(id);
  }
}

/** The estimated count for all requests: the spans outside request trees as counted, those inside scaled by `factor`. */
export function estimatedCount(observed: number, inRequestTrees: number, factor: number): number {
  return Math.round(observed - inRequestTrees + inRequestTrees * factor);
}
