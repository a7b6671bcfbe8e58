/**
 * How big one event type may be. defineProvider refuses more, and a reader refuses a trace that
 * declares more (docs/FORMAT.md, "Limits"): what a reader must hold per type stays bounded.
 */
export const MAX_NAME_BYTES = 256;
export const MAX_FIELDS_PER_EVENT = 1024;

/**
 * The most bytes one type's description takes in a thread buffer: a varint type index, then the
 * descriptor (format/metadata-codec.ts) with every name at its longest, every varint at its widest
 * (id ≤ 65535, version a safe integer) and MAX_FIELDS_PER_EVENT fields. The drain holds no more than
 * this for a description that arrives in parts.
 */
export const MAX_DESCRIPTION_BYTES = 5 + 2 * (2 + MAX_NAME_BYTES) + 3 + 8 + 1 + 8 + 2 + MAX_FIELDS_PER_EVENT * (2 + MAX_NAME_BYTES + 1);
