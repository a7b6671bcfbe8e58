import type { FieldType } from './field-type.js';
import type { PayloadLayout } from './payload-layout.js';
import type { RecordTarget } from './record-abi.js';

/**
 * What an event writer accepts for each field type, in the two forms the writers need: an expression
 * for generated writers and a predicate for closure writers and for the refusal path. Every argument
 * is checked before the buffer is touched: a value of the wrong type would make the size NaN
 * (passing the bounds check) or run user code (valueOf) in the middle of a write.
 */

/** The true element count of a typed array: the intrinsic getter, which a subclass cannot override. */
export const typedArrayLength = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), 'length')!.get! as (this: Uint8Array) => number;

/** A JavaScript expression that is true when `a` is a value the field type accepts as it is; undefined when every value is. */
export function acceptsExpr(type: FieldType, a: string): string | undefined {
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

/** The same test as acceptsExpr, as a function of the value. */
export function accepts(type: FieldType, a: unknown): boolean {
  switch (type) {
    case 'bool':
      return true;
    case 'u64':
    case 'i64':
      return typeof a === 'number' || typeof a === 'bigint';
    case 'string':
      return typeof a === 'string';
    case 'bytes':
      return ArrayBuffer.isView(a) && a instanceof Uint8Array;
    default:
      return typeof a === 'number';
  }
}

/** `writeAt`'s time: a finite number (`ts - ts` is 0 only for those). */
export function acceptsTime(ts: unknown): boolean {
  return typeof ts === 'number' && ts - ts === 0;
}

/** Which argument (0 = first field; -1 = the timestamp) a writer refused, and the value. */
export type InvalidArgument = (field: number, value: unknown) => void;

/** The slow path for a refused call: say which argument, and count the attempt as dropped in every session. */
export type Refuse = (targets: readonly RecordTarget[], call: ArrayLike<unknown>) => void;

export function refuser(layout: PayloadLayout, withTimestamp: boolean, onInvalid: InvalidArgument): Refuse {
  const base = withTimestamp ? 1 : 0;
  return (targets, call) => {
    if (withTimestamp && !acceptsTime(call[0])) onInvalid(-1, call[0]);
    else {
      const bad = layout.fields.findIndex((f, k) => !accepts(f.type, call[base + k]));
      onInvalid(bad, call[base + bad]);
    }
    for (let i = 0; i < targets.length; i++) targets[i]!.reject();
  };
}
