import type { TraceHeader } from '../format/stream-header.js';

const MASK64 = (1n << 64n) - 1n;
const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const TWO32 = 4294967296;
/** Told apart from the span-id derivation, so a root's trace id never repeats its span id (0x9e3779b97f4a7c15). */
const TRACE_HIGH_HI = 0x9e3779b9;
const TRACE_HIGH_LO = 0x7f4a7c15;
/** SplitMix64's multipliers 0xbf58476d1ce4e5b9 and 0x94d049bb133111eb, as 32-bit halves. */
const M1_HI = 0xbf58476d;
const M1_LO = 0x1ce4e5b9;
const M2_HI = 0x94d049bb;
const M2_LO = 0x133111eb;

/** The high 32 bits of the 64-bit product of two uint32s (16-bit limbs keep every partial product exact). */
function mulHigh32(a: number, b: number): number {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const b0 = b & 0xffff;
  const b1 = b >>> 16;
  const p01 = a0 * b1;
  const p10 = a1 * b0;
  const mid = ((a0 * b0) >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  return (a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + Math.floor(mid / 65536)) >>> 0;
}

/**
 * SplitMix64's finalizer (a bijection on 64 bits, so distinct span ids stay distinct) on a 64-bit
 * value given as two uint32 halves, written big-endian into `out` at `at`, never all zeros (as W3C
 * requires: zero becomes 1). In 32-bit arithmetic: BigInt's allocations were most of a span's id cost.
 */
function mix64Into(out: Uint8Array, at: number, hi: number, lo: number): void {
  // z ^= z >> 30; z *= M1
  lo = (lo ^ ((lo >>> 30) | (hi << 2))) >>> 0;
  hi = (hi ^ (hi >>> 30)) >>> 0;
  let h = (mulHigh32(lo, M1_LO) + Math.imul(lo, M1_HI) + Math.imul(hi, M1_LO)) >>> 0;
  lo = Math.imul(lo, M1_LO) >>> 0;
  hi = h;
  // z ^= z >> 27; z *= M2
  lo = (lo ^ ((lo >>> 27) | (hi << 5))) >>> 0;
  hi = (hi ^ (hi >>> 27)) >>> 0;
  h = (mulHigh32(lo, M2_LO) + Math.imul(lo, M2_HI) + Math.imul(hi, M2_LO)) >>> 0;
  lo = Math.imul(lo, M2_LO) >>> 0;
  hi = h;
  // z ^= z >> 31
  lo = (lo ^ ((lo >>> 31) | (hi << 1))) >>> 0;
  hi = (hi ^ (hi >>> 31)) >>> 0;
  if (hi === 0 && lo === 0) lo = 1;
  out[at] = hi >>> 24;
  out[at + 1] = hi >>> 16;
  out[at + 2] = hi >>> 8;
  out[at + 3] = hi;
  out[at + 4] = lo >>> 24;
  out[at + 5] = lo >>> 16;
  out[at + 6] = lo >>> 8;
  out[at + 7] = lo;
}

function fnv64(s: string): bigint {
  let h = FNV_OFFSET;
  for (const b of new TextEncoder().encode(s)) h = ((h ^ BigInt(b)) * FNV_PRIME) & MASK64;
  return h;
}

/** The high half of a span id (a trace's ids are below 2^53, numbers then; a bigint is taken whole). */
const highOf = (id: number | bigint): number => (typeof id === 'number' ? Math.floor(id / TWO32) >>> 0 : Number((BigInt.asUintN(64, id) >> 32n) & 0xffffffffn));
const lowOf = (id: number | bigint): number => (typeof id === 'number' ? id >>> 0 : Number(id & 0xffffffffn));

/**
 * OpenTelemetry wants a 128-bit trace id and a 64-bit span id, unique across processes; a trace
 * holds span ids unique within its process (below 2^53). The W3C-sized ids are derived from those
 * and the process's id seed (the header's `idSeed`, random per process; a trace without one uses its
 * host, pid and start time), so the same trace file always gives the same ids, offline or live, and
 * a process writing `traceparent` derives the same ones (trace-context.ts).
 */
export class OtlpIds {
  private readonly keyHi: number;
  private readonly keyLo: number;

  constructor(seed: string) {
    const key = fnv64(seed);
    this.keyHi = Number(key >> 32n);
    this.keyLo = Number(key & 0xffffffffn);
  }

  static forHeader(h: TraceHeader): OtlpIds {
    return new OtlpIds(h.idSeed ?? `${h.hostname}/${h.pid}/${h.clock.wallClockNs}`);
  }

  /** The 64-bit span id of a trace's span id (never all zeros, as W3C requires). */
  spanId(id: number | bigint): Uint8Array {
    const out = new Uint8Array(8);
    mix64Into(out, 0, (highOf(id) ^ this.keyHi) >>> 0, (lowOf(id) ^ this.keyLo) >>> 0);
    return out;
  }

  /** The trace id of a trace begun by span `rootId` (a span with no parent in its process). */
  traceId(rootId: number | bigint): Uint8Array {
    const out = new Uint8Array(16);
    const hi = (highOf(rootId) ^ this.keyHi) >>> 0;
    const lo = (lowOf(rootId) ^ this.keyLo) >>> 0;
    mix64Into(out, 0, (hi ^ TRACE_HIGH_HI) >>> 0, (lo ^ TRACE_HIGH_LO) >>> 0);
    mix64Into(out, 8, hi, lo);
    return out;
  }
}

/** An id as W3C and OTLP/JSON write it: lowercase hex. */
export function idHex(id: Uint8Array): string {
  return Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString('hex');
}
