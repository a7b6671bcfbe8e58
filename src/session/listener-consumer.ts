import { EventOrder } from '../format/event-order.js';
import type { BlockEvent } from '../format/events-block.js';
import type { TraceEvent } from '../format/trace-event.js';
import { TraceParser } from '../format/trace-parser.js';
import type { OutputConsumer } from './session-output.js';

// Its own module: it brings the trace parser, which a session of any other output never loads.
/** Decodes the stream in the owning thread and calls back per event, in timestamp order per drain pass. */
export class ListenerConsumer implements OutputConsumer {
  private readonly order = new EventOrder(0);
  private readonly ready: BlockEvent[] = [];
  private readonly parser: TraceParser;
  private warned = false;

  constructor(private readonly onEvent: (e: TraceEvent) => void) {
    this.parser = new TraceParser({
      event: (e) => this.order.push(e),
      sequencePoint: (sp) => this.order.release(sp.timeNs, this.ready),
      end: () => this.order.releaseAll(this.ready),
    });
  }

  consume(bytes: Uint8Array): void {
    this.parser.push(bytes);
    for (const e of this.ready) {
      const { type: _type, ...event } = e;
      try {
        this.onEvent(event);
      } catch (err) {
        if (!this.warned) process.emitWarning(`tracepipe: onEvent listener threw: ${(err as Error).message}`);
        this.warned = true;
      }
    }
    this.ready.length = 0;
  }

  finish(): Promise<void> {
    return Promise.resolve();
  }
}
