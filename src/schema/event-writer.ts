import type { PayloadLayout } from './payload-layout.js';
import { RECORD_HEADER_SIZE, type RecordTarget } from './record-abi.js';
import { utf8Length, writeUtf8 } from './utf8.js';

export type WriteFn = (this: { _targets: RecordTarget[] }, ...args: any[]) => void;

const TWO32 = 4294967296;
const STRONG_ORDER = process.arch === 'x64' || process.arch === 'ia32';

/** The clock every event is stamped with; called as a method so the JIT can inline it. */
export interface Clock {
  now(): number;
}

/**
 * Generates the positional `write(...)` of one event type: a straight-line copy of each argument to a
 * constant offset in typed-array views, so the hot path has no loop over fields, no lookup and no
 * allocation for numeric fields. `withTimestamp` makes the variant whose first argument is the time.
 */
export function generateWriter(layout: PayloadLayout, typeIndex: number, clock: Clock, withTimestamp: boolean): WriteFn {
  const args = layout.fields.map((f) => `a${f.index}`);
  const H = RECORD_HEADER_SIZE;
  const lines: string[] = [];
  let size = `${H + layout.fixedSize}`;
  for (const v of layout.variable) {
    const a = `a${v.index}`;
    lines.push(v.type === 'string' ? `const n${v.index} = utf8Length(${a});` : `const n${v.index} = ${a}.length;`);
    size += ` + n${v.index}`;
  }
  const body: string[] = [];
  for (const f of layout.fields) {
    const a = `a${f.index}`;
    const o = H + f.offset;
    switch (f.type) {
      case 'f64': body.push(`f64[(p + ${o}) >> 3] = ${a};`); break;
      case 'f32': body.push(`t.f32[(p + ${o}) >> 2] = ${a};`); break;
      case 'u32': body.push(`u32[(p + ${o}) >> 2] = ${a};`); break;
      case 'i32': body.push(`t.i32[(p + ${o}) >> 2] = ${a};`); break;
      case 'u16': body.push(`t.u16[(p + ${o}) >> 1] = ${a};`); break;
      case 'i16': body.push(`t.i16[(p + ${o}) >> 1] = ${a};`); break;
      case 'u8': body.push(`t.u8[p + ${o}] = ${a};`); break;
      case 'i8': body.push(`t.i8[p + ${o}] = ${a};`); break;
      case 'bool': body.push(`t.u8[p + ${o}] = ${a} ? 1 : 0;`); break;
      case 'u64':
      case 'i64':
        // Numbers split into two words so the common case never allocates a BigInt.
        body.push(
          `if (typeof ${a} === 'bigint') t.b64[(p + ${o}) >> 3] = ${a};`,
          `else { const hi = Math.floor(${a} / ${TWO32}); u32[(p + ${o}) >> 2] = ${a} - hi * ${TWO32}; t.i32[(p + ${o + 4}) >> 2] = hi; }`,
        );
        break;
      case 'string':
      case 'bytes':
        body.push(`u32[(p + ${o}) >> 2] = n${f.index};`);
        break;
    }
  }
  let tail = `let q = p + ${H + layout.fixedSize};`;
  for (const v of layout.variable) {
    tail += v.type === 'string' ? ` q = writeUtf8(t.u8, q, a${v.index});` : ` t.u8.set(a${v.index}, q); q += n${v.index};`;
  }
  // x86 keeps stores in program order, so a plain store publishes the record; weaker memory models
  // (arm64) need the release an Atomics.store gives, or the drain could see the end before the bytes.
  const publish = STRONG_ORDER ? 'u32[t.commitIndex] = q;' : 'Atomics.store(u32, t.commitIndex, q);';
  const src = `
return function write(${withTimestamp ? 'ts, ' : ''}${args.join(', ')}) {
  ${withTimestamp ? '' : 'const ts = clock.now();'}
  const targets = this._targets;
  ${lines.join('\n  ')}
  const size = ${size};
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i];
    let p = t.pos;
    if (p + size > t.end) { p = t.reserve(size); if (p < 0) continue; }
    const u32 = t.u32, f64 = t.f64;
    u32[(p >> 2) + 1] = ${typeIndex};
    f64[(p >> 3) + 1] = ts;
    ${body.join('\n    ')}
    ${tail}
    u32[p >> 2] = q - p;
    q = (q + 7) & -8;
    t.pos = q;
    ${publish}
    t.seq++;
  }
};`;
  return new Function('clock', 'utf8Length', 'writeUtf8', src)(clock, utf8Length, writeUtf8) as WriteFn;
}
