/**
 * How big one event type may be. defineProvider refuses more, and a reader refuses a trace that
 * declares more (docs/FORMAT.md, "Limits"): what a reader must hold per type stays bounded.
 */
export const MAX_NAME_BYTES = 256;
export const MAX_FIELDS_PER_EVENT = 1024;
