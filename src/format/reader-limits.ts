/**
 * What a reader holds at most, whatever its input, so its memory is bounded by these and never by
 * the size of the file (docs/FORMAT.md, "Limits"). Each lies far above what tracepipe writes; a
 * trace past one is refused with a `limit` TraceFormatError at the byte where it went past.
 */

/** Distinct thread ids a summary tracks, and threads in one sequence point (a session has at most 4,096). */
export const MAX_THREADS = 16_384;
/** Event type definitions in one stream. */
export const MAX_EVENT_TYPES = 8_192;
/** Fields of all event type definitions together. */
export const MAX_FIELDS_IN_ALL_TYPES = 65_536;
/** One event's payload (a producer's record must fit in one chunk of at most 64 KiB). */
export const MAX_EVENT_PAYLOAD = 1 << 20;
/** The reorder window never exceeds this, whatever the end-of-stream block or the caller says. */
export const MAX_REORDER_WINDOW_NS = 60e9;
/** Estimated heap the reorder window may hold; past it the earliest events leave early. */
export const MAX_REORDER_BYTES = 16 << 20;
