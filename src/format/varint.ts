/**
 * LEB128 varints over plain Numbers (exact up to 2^53), so timestamps and sequence numbers never
 * need a BigInt. Negative values go through zigzag first.
 */
export const MAX_VARINT_BYTES = 8; // 7 * 8 = 56 bits > 53

export function zigzag(n: number): number {
  return n >= 0 ? n * 2 : -n * 2 - 1;
}
export function unzigzag(n: number): number {
  return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
}

export function varintSize(n: number): number {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}
