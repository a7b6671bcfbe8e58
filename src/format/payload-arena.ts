/** Bytes of one pooled page; a larger payload gets a page of its own. */
const PAGE_BYTES = 64 * 1024;
/** A handle is page × this + offset; an offset may be PAGE_BYTES itself (an empty payload at the end of a full page). */
const HANDLE_STRIDE = 2 * PAGE_BYTES;

function pageOf(handle: number): number {
  return Math.floor(handle / HANDLE_STRIDE);
}

/**
 * Payload bytes held outside the garbage-collected heap: copied into pages, freed one by one, and a
 * page is reused once nothing on it is held. Holding a payload here costs no JS object, so a reader
 * that keeps many events for a while does not make the collector promote and sweep them.
 */
export class PayloadArena {
  private readonly pages: (Uint8Array | undefined)[] = [];
  /** A view of each page, for payload decoders (one per page, not one per payload). */
  private readonly views: (DataView | undefined)[] = [];
  private readonly live: number[] = [];
  private readonly emptyPages: number[] = [];
  private readonly unusedIds: number[] = [];
  private current = -1;
  private pos = PAGE_BYTES;
  /** Bytes of the pages in use (holding a payload, or being filled). */
  bytes = 0;

  /** Copies `src[start, start+length)` in; returns a handle for bytesOf/offsetOf/free. */
  store(src: Uint8Array, start: number, length: number): number {
    let page: number;
    let at = 0;
    if (length > PAGE_BYTES) {
      page = this.newPage(new Uint8Array(length));
      this.bytes += length;
    } else {
      if (this.current < 0 || this.pos + length > PAGE_BYTES) this.nextPage();
      page = this.current;
      at = this.pos;
      this.pos += length;
    }
    this.pages[page]!.set(src.subarray(start, start + length), at);
    this.live[page]!++;
    return page * HANDLE_STRIDE + at;
  }

  bytesOf(handle: number): Uint8Array {
    return this.pages[pageOf(handle)]!;
  }

  viewOf(handle: number): DataView {
    return this.views[pageOf(handle)]!;
  }

  offsetOf(handle: number): number {
    return handle % HANDLE_STRIDE;
  }

  free(handle: number): void {
    const page = pageOf(handle);
    if (--this.live[page]! > 0 || page === this.current) return;
    const bytes = this.pages[page]!;
    this.bytes -= bytes.length;
    if (bytes.length === PAGE_BYTES) this.emptyPages.push(page);
    else {
      this.pages[page] = undefined;
      this.views[page] = undefined;
      this.unusedIds.push(page);
    }
  }

  private nextPage(): void {
    const old = this.current;
    const reused = this.emptyPages.pop();
    this.current = reused ?? this.newPage(new Uint8Array(PAGE_BYTES));
    this.pos = 0;
    this.bytes += PAGE_BYTES;
    if (old >= 0 && this.live[old] === 0) {
      this.bytes -= PAGE_BYTES;
      this.emptyPages.push(old);
    }
  }

  private newPage(bytes: Uint8Array): number {
    const id = this.unusedIds.pop() ?? this.pages.length;
    this.pages[id] = bytes;
    this.views[id] = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.live[id] = 0;
    return id;
  }
}
