import { Ctl, type SessionMemory, SlotI32 } from './session-memory.js';

const PARK_RECHECK_MS = 50;

/**
 * Block mode's waiting room: a FIFO of parked producer slots in shared memory. Only the head may take
 * a freed chunk, each producer sleeps on a word of its own slot, and whoever frees a chunk wakes only
 * the head, which hands on to the next while chunks remain (the fairness the EventPipe review asked
 * for). All queue updates happen under the memory's lock.
 */
export class FairQueue {
  private readonly cap: number;

  constructor(private readonly m: SessionMemory) {
    this.cap = m.maxSlots + 1;
  }

  private headSlot(): number {
    const i = this.m.i32;
    const h = i[Ctl.WaitHead]!;
    return h === i[Ctl.WaitTail]! ? -1 : i[this.m.waitQueue + h]!;
  }

  /** Parks `slot` until it is at the head and a chunk is free (returns it) or `aborted()` (returns -1). */
  wait(slot: number, aborted: () => boolean): number {
    const m = this.m;
    const i = m.i32;
    const wakeIdx = m.slotI32(slot, SlotI32.Wake);
    m.lock();
    const t = i[Ctl.WaitTail]!;
    i[m.waitQueue + t] = slot;
    Atomics.store(i, Ctl.WaitTail, (t + 1) % this.cap);
    i[Ctl.Parked]!++;
    m.unlock();
    for (;;) {
      const seen = Atomics.load(i, wakeIdx);
      if (aborted()) {
        this.leave(slot);
        this.wakeHead();
        return -1;
      }
      m.lock();
      if (this.headSlot() === slot && i[Ctl.FreeCount]! > 0) {
        const n = i[Ctl.FreeCount]!;
        const c = i[m.freeStack + n - 1]!;
        i[Ctl.FreeCount] = n - 1;
        Atomics.store(i, Ctl.WaitHead, (i[Ctl.WaitHead]! + 1) % this.cap);
        i[Ctl.Parked]!--;
        const more = n - 1 > 0;
        m.unlock();
        if (more) this.wakeHead();
        return c;
      }
      m.unlock();
      Atomics.wait(i, wakeIdx, seen, PARK_RECHECK_MS);
    }
  }

  private leave(slot: number): void {
    const m = this.m;
    const i = m.i32;
    m.lock();
    const kept: number[] = [];
    for (let h = i[Ctl.WaitHead]!; h !== i[Ctl.WaitTail]!; h = (h + 1) % this.cap) {
      const s = i[m.waitQueue + h]!;
      if (s !== slot) kept.push(s);
    }
    kept.forEach((s, k) => (i[m.waitQueue + k] = s));
    Atomics.store(i, Ctl.WaitHead, 0);
    Atomics.store(i, Ctl.WaitTail, kept.length);
    i[Ctl.Parked]!--;
    m.unlock();
  }

  /** Wakes the producer at the head of the queue, if any (called after a chunk is freed). */
  wakeHead(): void {
    const m = this.m;
    if (Atomics.load(m.i32, Ctl.Parked) === 0) return;
    m.lock();
    const s = this.headSlot();
    m.unlock();
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
