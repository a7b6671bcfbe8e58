// One process of the string-write benchmark: writes strings of one length one way, `COUNTED` times
// inside callgrind's window (bench.mjs): `node child.mjs TREE MODE LENGTH COUNTED`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';

const [tree, mode, lengthArg, countedArg] = process.argv.slice(2);
const length = Number(lengthArg);
const counted = Number(countedArg);
const WARMUP = 30_000;
const { startSession, defineProvider } = await import(pathToFileURL(join(tree, 'dist/index.js')).href);
const { writeUtf8 } = await import(pathToFileURL(join(tree, 'dist/schema/utf8.js')).href);
// Node's encoder as writers call it (record-abi.ts).
const { utf8Write } = await import(pathToFileURL(join(tree, 'dist/schema/record-abi.js')).href);
const bench = defineProvider('Bench.Strings', { events: { Text: { id: 1, fields: [['text', 'string']] } } });
const dir = mkdtempSync(join(tmpdir(), 'tracepipe-string-write-'));
const session = await startSession({ providers: 'Bench.Strings', output: join(dir, 'strings.tptrace') });

// Flat one-byte strings, as Node's HTTP parser makes a request's URL: three, so no call sees one constant.
const strings = ['/a', '/b', '/c'].map((p) => Buffer.from(`${p}/${'x'.repeat(length)}`.slice(0, length), 'latin1').toString('latin1'));
const memory = new SharedArrayBuffer(1 << 16);
const u8 = new Uint8Array(memory);
const buf = Buffer.from(memory);
let pos = 0;
const ways = {
  none: () => {},
  loop: (s) => {
    pos = writeUtf8(u8, pos, s);
    if (pos > 60_000) pos = 0;
  },
  encoder: (s) => {
    pos += utf8Write.call(buf, s, pos, buf.length - pos);
    if (pos > 60_000) pos = 0;
  },
  event: (s) => bench.Text.write(s),
};
const write = ways[mode];
if (!write || !(length > 0) || !(counted > 0)) throw new Error(`usage: child.mjs TREE ${Object.keys(ways).join('|')} LENGTH COUNTED`);
function run(n) {
  for (let i = 0; i < n; i++) write(strings[i % 3]);
}
// Yields between batches: the session's buffer is drained as in an application.
const batches = async (n) => {
  for (let k = 0; k < n / 1000; k++) {
    run(1000);
    await new Promise((r) => setImmediate(r));
  }
};
await batches(WARMUP);
v8.cachedDataVersionTag(); // callgrind zeroes its counts here
await batches(counted);
v8.getHeapCodeStatistics(); // and dumps them here
await session.stop();
rmSync(dir, { recursive: true, force: true });
