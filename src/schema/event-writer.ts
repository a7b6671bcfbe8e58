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

/** The true element count of a typed array: the intrinsic getter, which a subclass cannot override. */
const typedArrayLength = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), 'length')!.get!;

/** A JavaScript expression that is true when `a` is a value the field type accepts as it is. */
function acceptsExpr(type: string, a: string): string | undefined {
  switch (type) {
    case 'bool':
      return undefined; // Truthiness runs no user code and means something for every value.
    case 'u64':
    case 'i64':
      return `(typeof ${a} === 'number' || typeof ${a} === 'bigint')`;
    case 'string':
      return `typeof ${a} === 'string'`;
    case 'bytes':
      // A real Uint8Array (so no Proxy, whose traps could run code mid-write); its length is read
      // through the intrinsic getter, so a subclass cannot make the copy larger than the reservation.
      return `(ArrayBuffer.isView(${a}) && ${a} instanceof Uint8Array)`;
    default:
      return `typeof ${a} === 'number'`;
  }
}

/** Which argument (0 = first field; -1 = the timestamp) a writer refused, and the value. */
export type InvalidArgument = (field: number, value: unknown) => void;

/**
 * Generates the positional `write(...)` of one event type: a straight-line copy of each argument to a
 * constant offset in typed-array views, so the hot path has no loop over fields, no lookup and no
 * allocation for numeric fields. `withTimestamp` makes the variant whose first argument is the time.
 */
export function generateWriter(
  layout: PayloadLayout,
  typeIndex: number,
  clock: Clock,
  withTimestamp: boolean,
  onInvalid: InvalidArgument,
  /** Publish each record with Atomics.store (a release) rather than a plain store; see docs/BUFFERING.md. */
  atomicPublish = !STRONG_ORDER,
): WriteFn {
  const args = layout.fields.map((f) => `a${f.index}`);
  // Every argument is checked before the buffer is touched: a value of the wrong type would make
  // the size NaN (passing the bounds check) or run user code (valueOf) in the middle of a write.
  const checks = layout.fields.map((f) => acceptsExpr(f.type, `a${f.index}`)).filter((c) => c !== undefined);
  if (withTimestamp) checks.unshift(`typeof ts === 'number' && ts - ts === 0`);
  const valid = checks.length ? checks.join(' && ') : 'true';
  const H = RECORD_HEADER_SIZE;
  const lines: string[] = [];
  let size = `${H + layout.fixedSize}`;
  for (const v of layout.variable) {
    const a = `a${v.index}`;
    lines.push(v.type === 'string' ? `const n${v.index} = utf8Length(${a});` : `const n${v.index} = typedArrayLength.call(${a});`);
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
  // x86 keeps stores in program order and V8 emits typed-array stores in program order (they all sit
  // on its effect chain), so a plain store publishes the record; weaker memory models (arm64) need the
  // release an Atomics.store gives, or the drain could see the end before the bytes. The argument and
  // the stress test that would catch a reordering are in docs/BUFFERING.md.
  const publish = atomicPublish ? 'Atomics.store(u32, t.commitIndex, q);' : 'u32[t.commitIndex] = q;';
  const src = `
return function write(${withTimestamp ? 'ts, ' : ''}${args.join(', ')}) {
  ${withTimestamp ? '' : 'const ts = clock.now();'}
  const targets = this._targets;
  if (!(${valid})) return refuse(targets, [${withTimestamp ? 'ts, ' : ''}${args.join(', ')}]);
  ${lines.join('\n  ')}
  const size = ${size};
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i];
    let p = t.pos;
    if (!(p + size <= t.end)) { p = t.reserve(size); if (p < 0) continue; }
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
  const accepts = layout.fields.map((f) => {
    const e = acceptsExpr(f.type, 'a');
    return e === undefined ? () => true : (new Function('a', `return ${e};`) as (a: unknown) => boolean);
  });
  /** The slow path for a refused call: say which argument, and count the attempt as dropped in every session. */
  function refuse(targets: RecordTarget[], call: ArrayLike<unknown>): void {
    const base = withTimestamp ? 1 : 0;
    if (withTimestamp && !(typeof call[0] === 'number' && Number.isFinite(call[0]))) onInvalid(-1, call[0]);
    else {
      const bad = accepts.findIndex((ok, k) => !ok(call[base + k]));
      onInvalid(bad, call[base + bad]);
    }
    for (let i = 0; i < targets.length; i++) targets[i]!.reject();
  }
  return new Function('clock', 'utf8Length', 'writeUtf8', 'typedArrayLength', 'refuse', src)(clock, utf8Length, writeUtf8, typedArrayLength, refuse) as WriteFn;
}
