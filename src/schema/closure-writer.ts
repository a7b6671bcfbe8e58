import type { Clock, WriteFn, WriterHost } from './event-writer.js';
import type { FieldType } from './field-type.js';
import type { PayloadLayout } from './payload-layout.js';
import { RECORD_HEADER_SIZE, STRONG_ORDER } from './record-abi.js';
import { utf8Length, writeUtf8 } from './utf8.js';
import { accepts, acceptsTime, type InvalidArgument, refuser, typedArrayLength } from './writer-arguments.js';

/**
 * The writer of an event type for a process that may not compile code from strings
 * (code-generation.ts): what generateWriter's code does, as a loop over the fields, writing the same
 * bytes in every case. Arguments are read from `arguments`, which the JIT does not allocate when they
 * are only indexed; the byte lengths of variable fields go into a per-writer scratch array (a write
 * runs no user code, so it cannot be re-entered while the array is in use).
 */
export function closureWriter(
  layout: PayloadLayout,
  typeIndex: number,
  clock: Clock,
  withTimestamp: boolean,
  onInvalid: InvalidArgument,
  atomicPublish = !STRONG_ORDER,
): WriteFn {
  const count = layout.fields.length;
  const first = withTimestamp ? 1 : 0;
  const types: FieldType[] = layout.fields.map((f) => f.type);
  const offsets = Int32Array.from(layout.fields, (f) => RECORD_HEADER_SIZE + f.offset);
  const variable = Int32Array.from(layout.variable, (f) => f.index);
  const lengths = new Int32Array(count);
  const fixedEnd = RECORD_HEADER_SIZE + layout.fixedSize;
  const refuse = refuser(layout, withTimestamp, onInvalid);
  const TWO32 = 4294967296;

  return function write(this: WriterHost): void {
    const ts: number = withTimestamp ? arguments[0] : clock.now();
    const targets = this._targets;
    let valid = !withTimestamp || acceptsTime(ts);
    for (let k = 0; valid && k < count; k++) valid = accepts(types[k]!, arguments[first + k]);
    if (!valid) {
      const call: unknown[] = [];
      for (let k = 0; k < arguments.length; k++) call.push(arguments[k]);
      return refuse(targets, call);
    }
    let size = fixedEnd;
    for (let j = 0; j < variable.length; j++) {
      const k = variable[j]!;
      const a = arguments[first + k];
      const n = types[k] === 'string' ? utf8Length(a) : typedArrayLength.call(a);
      lengths[k] = n;
      size += n;
    }
    for (let i = 0; i < targets.length; i++) {
      const t = targets[i]!;
      let p = t.pos;
      if (!(p + size <= t.end && t.described[typeIndex] === 1)) {
        p = t.reserve(size, this);
        if (p < 0) continue;
      }
      const u32 = t.u32;
      u32[(p >> 2) + 1] = typeIndex;
      t.f64[(p >> 3) + 1] = ts;
      for (let k = 0; k < count; k++) {
        const a = arguments[first + k];
        const o = p + offsets[k]!;
        switch (types[k]) {
          case 'f64': t.f64[o >> 3] = a; break;
          case 'f32': t.f32[o >> 2] = a; break;
          case 'u32': u32[o >> 2] = a; break;
          case 'i32': t.i32[o >> 2] = a; break;
          case 'u16': t.u16[o >> 1] = a; break;
          case 'i16': t.i16[o >> 1] = a; break;
          case 'u8': t.u8[o] = a; break;
          case 'i8': t.i8[o] = a; break;
          case 'bool': t.u8[o] = a ? 1 : 0; break;
          case 'u64':
          case 'i64':
            if (typeof a === 'bigint') t.b64[o >> 3] = a;
            else {
              const hi = Math.floor(a / TWO32);
              u32[o >> 2] = a - hi * TWO32;
              t.i32[(o + 4) >> 2] = hi;
            }
            break;
          default:
            u32[o >> 2] = lengths[k]!;
        }
      }
      let q = p + fixedEnd;
      for (let j = 0; j < variable.length; j++) {
        const k = variable[j]!;
        const a = arguments[first + k];
        if (types[k] === 'string') q = writeUtf8(t.u8, q, a);
        else {
          t.u8.set(a, q);
          q += lengths[k]!;
        }
      }
      u32[p >> 2] = q - p;
      q = (q + 7) & -8;
      t.pos = q;
      // Published as generateWriter publishes (docs/BUFFERING.md, "Publishing").
      if (atomicPublish) Atomics.store(u32, t.commitIndex, q);
      else u32[t.commitIndex] = q;
      t.seq++;
    }
  } as WriteFn;
}
