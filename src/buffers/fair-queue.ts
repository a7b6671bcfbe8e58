import { Ctl, NO_TICKET, type SessionMemory, SlotI32 } from './session-memory.js';

const PARK_RECHECK_MS = 50;
/** A head that has not beaten for this long (20 rechecks) is taken for dead and skipped. */
export const HEAD_DEAD_MS = 1000;
/** A served ticket no slot holds is skipped when still unheld this much later (its holder may be registering). */
const ORPHAN_MS = 20;

/** Why a wait ended without a chunk. */
export const WaitEnd = { Aborted: -1, TimedOut: -2 } as const;

/**
 * Block mode's waiting room: a ticket line in shared memory (Ctl.TicketNext / Ctl.TicketServing).
 * A parked producer takes the next ticket and sleeps on its own slot's wake word; only the holder of
 * the ticket being served may take a freed chunk, and it hands on to the next while chunks remain
 * (the fairness the EventPipe review asked for). There is no lock: every step is one atomic operation
 * on one word, so a thread terminated at any instruction leaves nothing held. A holder that dies
 * stops beating and is skipped by whoever watches the head next (the drain, or the producers behind
 * it); a holder skipped while alive notices and takes a new ticket, so nothing is lost, only its turn.
 */
export class FairQueue {
  /** This party's view of the head: which ticket, its holder's beat, and since when (this thread's clock). */
  private watchedTicket = -1;
  private watchedBeat = -1;
  private watchedSince = 0;

  constructor(private readonly m: SessionMemory) {}

  /** Nobody is in line (no producer is parked or about to park). */
  get empty(): boolean {
    return Atomics.load(this.m.i32, Ctl.TicketServing) === Atomics.load(this.m.i32, Ctl.TicketNext);
  }

  /** The slot holding `ticket`, or -1 when none does (it left, died before registering, or was reclaimed). */
  private holderOf(ticket: number): number {
    const m = this.m;
    for (let s = 0; s < m.slotCount; s++) if (Atomics.load(m.i32, m.slotI32(s, SlotI32.Ticket)) === ticket) return s;
    return -1;
  }

  /**
   * Parks `slot` until it holds the served ticket and a chunk is free (returns the chunk), the session
   * goes away (`aborted()`: WaitEnd.Aborted), or no chunk at all is freed for `timeoutMs` (the
   * session's block timeout; 0: no bound) (WaitEnd.TimedOut). Whatever the outcome, the slot holds no
   * ticket on return.
   */
  wait(slot: number, aborted: () => boolean, timeoutMs = this.m.blockTimeoutMs): number {
    const m = this.m;
    const i = m.i32;
    const wakeIdx = m.slotI32(slot, SlotI32.Wake);
    const ticketIdx = m.slotI32(slot, SlotI32.Ticket);
    const beatIdx = m.slotI32(slot, SlotI32.Beat);
    let freed = Atomics.load(i, Ctl.ChunksFreed);
    let progressAt = performance.now();
    let ticket = this.takeTicket(ticketIdx);
    for (;;) {
      const seen = Atomics.load(i, wakeIdx);
      Atomics.add(i, beatIdx, 1);
      if (aborted()) return this.leave(ticketIdx, ticket, WaitEnd.Aborted);
      const serving = Atomics.load(i, Ctl.TicketServing);
      if (serving === ticket) {
        const c = m.claimFree(slot);
        if (c >= 0) {
          // Another party may have skipped this ticket meanwhile (taking it for dead): the chunk is ours either way.
          Atomics.compareExchange(i, Ctl.TicketServing, ticket, ticket + 1);
          Atomics.store(i, ticketIdx, NO_TICKET);
          if (Atomics.load(i, Ctl.FreeCount) > 0) this.wakeHead();
          return c;
        }
      } else if (serving > ticket) {
        // Skipped while alive (a beat missed under heavy load): back in line, at the end.
        ticket = this.takeTicket(ticketIdx);
        continue;
      } else {
        this.checkHead();
      }
      const now = performance.now();
      const f = Atomics.load(i, Ctl.ChunksFreed);
      if (f !== freed) {
        freed = f;
        progressAt = now;
      } else if (timeoutMs > 0 && now - progressAt >= timeoutMs) {
        return this.leave(ticketIdx, ticket, WaitEnd.TimedOut);
      }
      Atomics.wait(i, wakeIdx, seen, PARK_RECHECK_MS);
    }
  }

  private takeTicket(ticketIdx: number): number {
    const t = Atomics.add(this.m.i32, Ctl.TicketNext, 1);
    Atomics.store(this.m.i32, ticketIdx, t);
    return t;
  }

  /** Gives up `ticket`: at the head, the line moves on; behind it, the ticket is skipped when it comes up. */
  private leave(ticketIdx: number, ticket: number, why: number): number {
    const i = this.m.i32;
    Atomics.store(i, ticketIdx, NO_TICKET);
    if (Atomics.compareExchange(i, Ctl.TicketServing, ticket, ticket + 1) === ticket) this.wakeHead();
    return why;
  }

  /**
   * Skips the served ticket when nobody alive holds it: its holder has not beaten for HEAD_DEAD_MS, or
   * no slot holds it (its holder left, was reclaimed, or died between taking and registering it) at
   * two checks ORPHAN_MS apart. Called by the drain on each pass and by the producers behind the head
   * at each recheck; each keeps its own view, measured on its own clock.
   */
  checkHead(): void {
    const m = this.m;
    const i = m.i32;
    const serving = Atomics.load(i, Ctl.TicketServing);
    if (serving === Atomics.load(i, Ctl.TicketNext)) return;
    const holder = this.holderOf(serving);
    const beat = holder < 0 ? -1 : Atomics.load(i, m.slotI32(holder, SlotI32.Beat));
    const now = performance.now();
    if (serving !== this.watchedTicket || beat !== this.watchedBeat) {
      this.watchedTicket = serving;
      this.watchedBeat = beat;
      this.watchedSince = now;
      return;
    }
    if (now - this.watchedSince < (holder < 0 ? ORPHAN_MS : HEAD_DEAD_MS)) return;
    if (Atomics.compareExchange(i, Ctl.TicketServing, serving, serving + 1) === serving) {
      if (holder >= 0) Atomics.compareExchange(i, m.slotI32(holder, SlotI32.Ticket), serving, NO_TICKET);
      this.wakeHead();
    }
  }

  /** Skips every ticket nobody holds any more (the drain, once the session stops: no one registers late then). */
  skipAbandoned(): void {
    const i = this.m.i32;
    for (;;) {
      const serving = Atomics.load(i, Ctl.TicketServing);
      if (serving === Atomics.load(i, Ctl.TicketNext) || this.holderOf(serving) >= 0) return;
      Atomics.compareExchange(i, Ctl.TicketServing, serving, serving + 1);
    }
  }

  /** Wakes the holder of the served ticket, if any (called after a chunk is freed). */
  wakeHead(): void {
    const m = this.m;
    const serving = Atomics.load(m.i32, Ctl.TicketServing);
    if (serving === Atomics.load(m.i32, Ctl.TicketNext)) return;
    const s = this.holderOf(serving);
    if (s >= 0) this.wake(s);
  }

  /** Teardown: every parked producer re-checks the session state now. */
  wakeAll(): void {
    const m = this.m;
    for (let s = 0; s < m.slotCount; s++) this.wake(s);
  }

  private wake(slot: number): void {
    const idx = this.m.slotI32(slot, SlotI32.Wake);
    Atomics.add(this.m.i32, idx, 1);
    Atomics.notify(this.m.i32, idx);
  }
}
