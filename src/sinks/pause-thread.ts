const word = new Int32Array(new SharedArrayBuffer(4));

/** Blocks this thread for `ms` (nothing ever notifies the word): a sink's wait between two tries. */
export function pauseThread(ms: number): void {
  Atomics.wait(word, 0, 0, ms);
}
