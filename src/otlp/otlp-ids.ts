import type { TraceHeader } from '../format/stream-header.js';

const MASK64 = (1n << 64n) - 1n;
const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
/** Told apart from the span-id derivation, so a root's trace id never repeats its span id. */
const TRACE_HIGH = 0x9e3779b97f4a7c15n;

/** SplitMix64's finalizer: a bijection on 64 bits, so distinct span ids stay distinct. */
function mix64(z: bigint): bigint {
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return z ^ (z >> 31n);
}

function fnv64(s: string): bigint {
  let h = FNV_OFFSET;
  for (const b of new TextEncoder().encode(s)) h = ((h ^ BigInt(b)) * FNV_PRIME) & MASK64;
  return h;
}

function put64(out: Uint8Array, at: number, v: bigint): void {
  for (let i = 7; i >= 0; i--) {
    out[at + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

/**
 * OpenTelemetry wants a 128-bit trace id and a 64-bit span id, unique across processes; a trace
 * holds span ids unique within its process (below 2^53). The W3C-sized ids are derived from those
 * and the process's id seed (the header's `idSeed`, random per process; a trace without one uses its
 * host, pid and start time), so the same trace file always gives the same ids, offline or live, and
 * a process writing `traceparent` derives the same ones (trace-context.ts).
 */
export class OtlpIds {
  private readonly key: bigint;

  constructor(seed: string) {
    this.key = fnv64(seed);
  }

  static forHeader(h: TraceHeader): OtlpIds {
    return new OtlpIds(h.idSeed ?? `${h.hostname}/${h.pid}/${h.clock.wallClockNs}`);
  }

  /** The 64-bit span id of a trace's span id (never all zeros, as W3C requires). */
  spanId(id: bigint): Uint8Array {
    const out = new Uint8Array(8);
    put64(out, 0, mix64(id ^ this.key) || 1n);
    return out;
  }

  /** The trace id of a trace begun by span `rootId` (a span with no parent in its process). */
  traceId(rootId: bigint): Uint8Array {
    const out = new Uint8Array(16);
    put64(out, 0, mix64(rootId ^ this.key ^ TRACE_HIGH) || 1n);
    put64(out, 8, mix64(rootId ^ this.key) || 1n);
    return out;
  }
}

/** An id as W3C and OTLP/JSON write it: lowercase hex. */
export function idHex(id: Uint8Array): string {
  return Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString('hex');
}
