/**
 * Node-sized scratch memory handed from one phase of a heap analysis to the next. A phase that is done
 * with an array gives its buffer back; the next phase takes a view of it instead of allocating. The
 * garbage collector would free the dead array only at some later collection, so on a heap of millions
 * of nodes a new array would often sit beside the dead one and raise the peak by its size.
 * Taken views are NOT zeroed: a phase writes every element it reads.
 */
export class ScratchBuffers {
  private readonly spare: ArrayBuffer[] = [];

  /** Returns the buffers of arrays nothing will read again. */
  give(...arrays: readonly ArrayBufferView[]): void {
    for (const a of arrays) if (a.buffer instanceof ArrayBuffer && !this.spare.includes(a.buffer)) this.spare.push(a.buffer);
  }

  /** The smallest spare buffer of at least `bytes`, or a new one. */
  private take(bytes: number): ArrayBuffer {
    let best = -1;
    for (let i = 0; i < this.spare.length; i++) {
      const size = this.spare[i]!.byteLength;
      if (size >= bytes && (best < 0 || size < this.spare[best]!.byteLength)) best = i;
    }
    return best < 0 ? new ArrayBuffer(bytes) : this.spare.splice(best, 1)[0]!;
  }

  int32(length: number): Int32Array {
    return new Int32Array(this.take(4 * length), 0, length);
  }

  uint32(length: number): Uint32Array {
    return new Uint32Array(this.take(4 * length), 0, length);
  }

  uint8(length: number): Uint8Array {
    return new Uint8Array(this.take(length), 0, length);
  }

  float64(length: number): Float64Array {
    return new Float64Array(this.take(8 * length), 0, length);
  }
}
