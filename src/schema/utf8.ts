/**
 * From this many UTF-16 units on, a generated writer has Node's encoder write a string (Buffer's
 * utf8Write as it was at load, into a Buffer over the same memory): it costs a fixed ~500 to ~900
 * instructions, against ~40 a unit for writeUtf8's loop, whose charCodeAt dispatches on the string's
 * representation for every unit. Both write the same bytes, lone surrogates as U+FFFD included
 * (BENCHMARKS.md §35).
 */
export const LONG_STRING = 32;

/** UTF-8 straight into a buffer, no allocation; lone surrogates become U+FFFD as TextEncoder does. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * Writes `s` at `pos`; the caller has made room for utf8Length(s) bytes (or 3 per UTF-16 unit). Returns
 * the end offset. Small, so that the JIT inlines it into the writers: ASCII, what nearly every string
 * written is, never leaves this loop.
 */
export function writeUtf8(u8: Uint8Array, pos: number, s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return writeUtf8From(u8, pos, s, i);
    u8[pos++] = c;
  }
  return pos;
}

/** writeUtf8 from the unit at `from` on, the first that is not ASCII. */
function writeUtf8From(u8: Uint8Array, pos: number, s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      u8[pos++] = c;
    } else if (c < 0x800) {
      u8[pos++] = 0xc0 | (c >> 6);
      u8[pos++] = 0x80 | (c & 0x3f);
    } else if (c >= 0xd800 && c <= 0xdfff) {
      const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && (d & 0xfc00) === 0xdc00) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
        u8[pos++] = 0xf0 | (c >> 18);
        u8[pos++] = 0x80 | ((c >> 12) & 0x3f);
        u8[pos++] = 0x80 | ((c >> 6) & 0x3f);
        u8[pos++] = 0x80 | (c & 0x3f);
      } else {
        u8[pos++] = 0xef;
        u8[pos++] = 0xbf;
        u8[pos++] = 0xbd;
      }
    } else {
      u8[pos++] = 0xe0 | (c >> 12);
      u8[pos++] = 0x80 | ((c >> 6) & 0x3f);
      u8[pos++] = 0x80 | (c & 0x3f);
    }
  }
  return pos;
}
