// A RecordTarget over a plain ArrayBuffer, so generated writers can be tested without sessions or
// threads. `end` is 0 and no type is described, so every write takes the slow path, and reserve() always hands back offset 0:
// each write overwrites the previous record at the start of the buffer.
export function fakeRecordTarget(bytes = 1 << 16) {
  const buf = new ArrayBuffer(bytes);
  return {
    pos: 0,
    end: 0,
    commitIndex: bytes / 4 - 1,
    seq: 0,
    u8: new Uint8Array(buf),
    i8: new Int8Array(buf),
    u16: new Uint16Array(buf),
    i16: new Int16Array(buf),
    u32: new Uint32Array(buf),
    i32: new Int32Array(buf),
    f32: new Float32Array(buf),
    f64: new Float64Array(buf),
    b64: new BigInt64Array(buf),
    buf: Buffer.from(buf),
    described: new Uint8Array(0),
    reserves: 0,
    reserve() {
      this.reserves++;
      return 0;
    },
  };
}

/** The record a writer left at offset 0 (see src/schema/record-abi.ts). */
export function recordAt0(t) {
  const length = t.u32[0];
  return { length, typeIndex: t.u32[1], timestampMs: t.f64[1], payloadStart: 16, payloadLength: length - 16 };
}
