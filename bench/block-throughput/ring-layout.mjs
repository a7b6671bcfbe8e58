/**
 * The raw ring that stands for the physical limit: one SharedArrayBuffer of RING_BYTES split into
 * segments (like a session's chunks), a control header of Int32 words, then the segments. The
 * producer fills a segment, publishes it by bumping HEAD and waits on TAIL while the ring is full;
 * the drainer writes published segments to a file and bumps TAIL. Counters count segments, not bytes.
 */
export const RING_BYTES = 1 << 20;
export const SEGMENT_BYTES = 64 * 1024;
export const SEGMENTS = RING_BYTES / SEGMENT_BYTES;
export const Word = { Head: 0, Tail: 1, Done: 2, Lengths: 4 };
export const DATA_OFFSET = 128;
