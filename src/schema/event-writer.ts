import type { PayloadLayout } from './payload-layout.js';
import { RECORD_HEADER_SIZE, type RecordTarget, type RecordType, STRONG_ORDER, utf8Write } from './record-abi.js';
import { LONG_STRING, utf8Length, writeUtf8 } from './utf8.js';
import { acceptsExpr, type InvalidArgument, refuser, typedArrayLength } from './writer-arguments.js';

/** What a writer is called on: its event type, whose targets it writes to. */
export interface WriterHost extends RecordType {
  readonly _targets: readonly RecordTarget[];
}

export type WriteFn = (this: WriterHost, ...args: any[]) => void;

const TWO32 = 4294967296;

/** The clock every event is stamped with; called as a method so the JIT can inline it. */
export interface Clock {
  now(): number;
}

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
  const checks = layout.fields.map((f) => acceptsExpr(f.type, `a${f.index}`)).filter((c) => c !== undefined);
  if (withTimestamp) checks.unshift(`typeof ts === 'number' && ts - ts === 0`);
  const valid = checks.length ? checks.join(' && ') : 'true';
  const H = RECORD_HEADER_SIZE;
  const lines: string[] = [];
  // A string's UTF-8 length is at most 3 bytes per UTF-16 unit (a surrogate pair, 2 units, is 4 bytes):
  // where that bound fits the chunk, the string is written in one pass and its length taken from what
  // was written. Where the bound does not fit, the exact size is counted first and the write goes on
  // as a two-pass write would (the closure writer's): in the chunk if it fits, else through reserve().
  let bound = `${H + layout.fixedSize}`;
  let size = `${H + layout.fixedSize}`;
  for (const v of layout.variable) {
    const a = `a${v.index}`;
    if (v.type === 'string') {
      bound += ` + 3 * ${a}.length`;
      size += ` + utf8Length(${a})`;
    } else {
      lines.push(`const n${v.index} = typedArrayLength.call(${a});`);
      bound += ` + n${v.index}`;
      size += ` + n${v.index}`;
    }
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
      case 'bytes':
        body.push(`u32[(p + ${o}) >> 2] = n${f.index};`);
        break;
      case 'string':
        // Its length slot is filled once the string is written (below).
        break;
    }
  }
  let tail = `let q = p + ${H + layout.fixedSize};`;
  for (const v of layout.variable) {
    const slot = `u32[(p + ${H + v.offset}) >> 2]`;
    const a = `a${v.index}`;
    tail += v.type === 'string' ? ` { const s = q; q = ${a}.length < ${LONG_STRING} ? writeUtf8(t.u8, q, ${a}) : q + utf8Write.call(t.buf, ${a}, q, t.buf.length - q); ${slot} = q - s; }` : ` t.u8.set(${a}, q); q += n${v.index};`;
  }
  // x86 keeps stores in program order and V8 emits typed-array stores in program order (they all sit
  // on its effect chain), so a plain store publishes the record; weaker memory models (arm64) need the
  // release an Atomics.store gives, or the drain could see the end before the bytes. The argument and
  // the stress test that would catch a reordering are in docs/BUFFERING.md.
  const publish = atomicPublish ? 'Atomics.store(u32, t.commitIndex, q);' : 'u32[t.commitIndex] = q;';
  const src = `
return (typeIndex, clock, refuse) => function write(${withTimestamp ? 'ts, ' : ''}${args.join(', ')}) {
  ${withTimestamp ? '' : 'const ts = clock.now();'}
  const targets = this._targets;
  if (!(${valid})) return refuse(targets, [${withTimestamp ? 'ts, ' : ''}${args.join(', ')}]);
  ${lines.join('\n  ')}
  const bound = ${bound};
  let size = 0;
  for (let i = 0; i < targets.length; i++) {
    const t = targets[i];
    let p = t.pos;
    if (!(p + bound <= t.end && t.described[typeIndex] === 1)) {
      if (size === 0) size = ${size};
      if (!(p + size <= t.end && t.described[typeIndex] === 1)) {
        p = t.reserve(size, this);
        if (p < 0) continue;
      }
    }
    const u32 = t.u32, f64 = t.f64;
    u32[(p >> 2) + 1] = typeIndex;
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
  let make = writerFactories.get(src);
  if (make === undefined) {
    make = new Function('utf8Length', 'writeUtf8', 'typedArrayLength', 'utf8Write', src)(utf8Length, writeUtf8, typedArrayLength, utf8Write) as WriterFactory;
    // Bounded: a process that keeps defining new layouts starts over rather than keep every one.
    if (writerFactories.size >= MAX_WRITER_FACTORIES) writerFactories.clear();
    writerFactories.set(src, make);
  }
  return make(typeIndex, clock, refuser(layout, withTimestamp, onInvalid));
}

type WriterFactory = (typeIndex: number, clock: Clock, refuse: (...args: any[]) => void) => WriteFn;

/**
 * One factory per writer source: the event types of one layout (every counter's, among them) get
 * closures of one function, which V8 compiles, optimises and keeps warm once for all of them, instead
 * of one cold copy a type (a counters publication writes ~50 types once a second).
 */
const writerFactories = new Map<string, WriterFactory>();
const MAX_WRITER_FACTORIES = 1024;
