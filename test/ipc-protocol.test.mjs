// The diagnostics protocol's framing and payloads: layouts, limits, and that no input makes the
// decoders fail with anything but a protocol error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  CommandSet, encodeFrame, errorFrame, FRAME_HEADER_SIZE, FrameReader, IpcError, IpcErrorCode, MAX_REQUEST_PAYLOAD, okFrame, replyPayload, TracingCommand,
} from '../dist/ipc/ipc-protocol.js';
import {
  decodeCollectRequest, decodeProcessInfo, decodeSessionId, decodeStopResult, encodeCollectRequest, encodeProcessInfo, encodeSessionId, encodeStopResult,
} from '../dist/ipc/ipc-commands.js';

function readAll(bytes, chunkSizes = [bytes.length], max = MAX_REQUEST_PAYLOAD) {
  const r = new FrameReader(max);
  let off = 0;
  let k = 0;
  while (off < bytes.length) {
    const n = Math.max(1, chunkSizes[k++ % chunkSizes.length]);
    const f = r.push(bytes.subarray(off, off + n));
    off += n;
    if (f) return { frame: f, rest: r.remainder, consumed: Math.min(off, bytes.length) };
  }
  return { frame: undefined, buffered: r.buffered };
}

function protocolError(fn) {
  try {
    fn();
  } catch (e) {
    if (e instanceof IpcError) return e;
    throw e;
  }
  return undefined;
}

test('a frame is a 12-byte header (magic, version, set, id, reserved, u32 length) then the payload', () => {
  const f = encodeFrame(CommandSet.Tracing, TracingCommand.StopTracing, Uint8Array.of(7, 0, 0, 0));
  assert.deepEqual([...f.subarray(0, FRAME_HEADER_SIZE)], [0x54, 0x50, 0x44, 0x53, 1, 0x02, 0x02, 0, 4, 0, 0, 0]);
  assert.deepEqual([...f.subarray(FRAME_HEADER_SIZE)], [7, 0, 0, 0]);
});

test('frames reassemble from any split, and bytes after the frame are kept', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 20 }), fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 }), (payload, extra, splits) => {
      const frame = encodeFrame(0x02, 0x01, payload);
      const all = new Uint8Array(frame.length + extra.length);
      all.set(frame);
      all.set(extra, frame.length);
      const { frame: f, rest, consumed } = readAll(all, splits);
      assert.ok(f);
      assert.deepEqual([...f.payload], [...payload]);
      assert.equal(f.commandSet, 0x02);
      assert.equal(f.commandId, 0x01);
      // Whatever followed the frame in the chunk that completed it.
      assert.deepEqual([...rest], [...all.subarray(frame.length, consumed)]);
    }),
  );
});

test('bad magic, unknown version, reserved byte and oversized length are refused from the header alone', () => {
  const good = encodeFrame(1, 0);
  const cases = [
    [(b) => (b[0] = 0x00), IpcErrorCode.BadFrame, /bad magic/],
    [(b) => (b[4] = 2), IpcErrorCode.UnsupportedVersion, /version 2/],
    [(b) => (b[7] = 1), IpcErrorCode.BadFrame, /reserved/],
    [(b) => new DataView(b.buffer).setUint32(8, MAX_REQUEST_PAYLOAD + 1, true), IpcErrorCode.PayloadTooLarge, /exceeds/],
  ];
  for (const [mutate, code, message] of cases) {
    const b = good.slice();
    mutate(b);
    const e = protocolError(() => new FrameReader(MAX_REQUEST_PAYLOAD).push(b));
    assert.ok(e, `expected an error for ${message}`);
    assert.equal(e.code, code);
    assert.match(e.message, message);
  }
});

test('a truncated frame is not a frame: the reader keeps waiting and says how much it holds', () => {
  const f = encodeFrame(2, 1, new Uint8Array(100));
  for (const cut of [0, 5, 11, 12, 50, 111]) {
    const r = readAll(f.subarray(0, cut));
    assert.equal(r.frame, undefined);
    if (cut > 0) assert.equal(r.buffered, cut);
  }
});

test('any byte string either yields a frame or fails with an IpcError, never anything else', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 4 }), (bytes, splits) => {
      protocolError(() => readAll(bytes, splits));
    }),
    { numRuns: 2000 },
  );
});

test('replies: OK carries the payload, Error carries code and message', () => {
  const ok = readAll(okFrame(Uint8Array.of(1, 2, 3))).frame;
  assert.deepEqual([...replyPayload(ok)], [1, 2, 3]);
  const err = readAll(errorFrame(IpcErrorCode.UnknownSession, 'no session 9 in process 1')).frame;
  const e = protocolError(() => replyPayload(err));
  assert.equal(e.code, IpcErrorCode.UnknownSession);
  assert.equal(e.message, 'no session 9 in process 1');
  assert.equal(protocolError(() => replyPayload({ commandSet: CommandSet.Server, commandId: 0xff, payload: Uint8Array.of(1) })).code, IpcErrorCode.BadPayload);
  assert.equal(protocolError(() => replyPayload({ commandSet: CommandSet.Tracing, commandId: 0, payload: new Uint8Array(0) })).code, IpcErrorCode.BadFrame);
});

test('command payloads round-trip', () => {
  const q = { providers: 'Test.App:0x3:Verbose:filter="a;b",Runtime.GC', bufferingMode: 'block', bufferSizeMB: 0.5, rundown: false };
  assert.deepEqual(decodeCollectRequest(encodeCollectRequest(q)), q);
  assert.equal(decodeSessionId(encodeSessionId(4_000_000_000), 'x'), 4_000_000_000);
  const stop = { sessionId: 3, status: 'failed', eventsWritten: 12, eventsDropped: 3, bytesWritten: 999, error: 'the reader closed the connection' };
  assert.deepEqual(decodeStopResult(encodeStopResult(stop)), stop);
  const info = {
    pid: 42, startTimeMs: 1_700_000_000_123, nodeVersion: 'v20.0.0', tracepipeVersion: '0.1.0', cwd: '/srv/ü', title: 'node',
    argv: ['/usr/bin/node', 'app.js', ''], execArgv: ['--import', 'tracepipe/register'],
    sessions: [{ id: 1, providers: 'A:0x1:4', bufferingMode: 'drop', state: 'running', attached: true }, { id: 2, providers: 'B:0xff:5', bufferingMode: 'block', state: 'stopping', attached: false }],
  };
  assert.deepEqual(decodeProcessInfo(encodeProcessInfo(info)), info);
});

test('malformed payloads are BadPayload errors, whatever the bytes', () => {
  const decoders = [decodeCollectRequest, decodeProcessInfo, decodeStopResult, (p) => decodeSessionId(p, 'StopTracing')];
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), fc.integer({ min: 0, max: decoders.length - 1 }), (bytes, k) => {
      const e = protocolError(() => decoders[k](bytes));
      if (e) assert.equal(e.code, IpcErrorCode.BadPayload);
    }),
    { numRuns: 3000 },
  );
  assert.match(protocolError(() => decodeCollectRequest(Uint8Array.of(1, 0x41, 7, 0, 0, 0, 0, 0))).message, /buffering mode 7/);
  assert.match(protocolError(() => decodeCollectRequest(new Uint8Array(2))).message, /malformed CollectTracing payload/);
});

test("ProcessInfo carries each session's buffer after the list: a reply without it (an older process) still decodes", () => {
  const session = { id: 1, providers: 'Test.Flight:0x1:4', bufferingMode: 'ring', state: 'running', attached: false };
  const info = { pid: 7, startTimeMs: 1, nodeVersion: 'v20.0.0', tracepipeVersion: '0.1.0', cwd: '/', title: 'node', argv: [], execArgv: [], sessions: [{ ...session, buffer: { bytes: 16_711_936, events: 517_891, eventBytes: 32 } }] };
  const payload = encodeProcessInfo(info);
  assert.deepEqual(decodeProcessInfo(payload), info);
  // The same reply as a process before the buffers were sent (and the OTLP counts after them, 16 bytes a session): the list ends the payload.
  assert.deepEqual(decodeProcessInfo(payload.subarray(0, payload.length - 24 - 16)), { ...info, sessions: [session] });
  assert.deepEqual(decodeProcessInfo(payload.subarray(0, payload.length - 16)), info);
});

test('ProcessInfo carries an OTLP export\'s counts after the buffers', () => {
  const session = { id: 2, providers: 'Node.Channels:0x1:4', bufferingMode: 'drop', state: 'running', attached: false, buffer: { bytes: 1024, events: 32, eventBytes: 32 }, otlp: { sent: 1200, dropped: 37 } };
  const info = { pid: 7, startTimeMs: 1, nodeVersion: 'v20.0.0', tracepipeVersion: '0.1.0', cwd: '/', title: 'node', argv: [], execArgv: [], sessions: [session] };
  assert.deepEqual(decodeProcessInfo(encodeProcessInfo(info)), info);
});
