// Provider spec strings and startSession's option checking: bad input gets one clear line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Level, liveSessions, parseProviderSpec, ProviderSpecError, SessionError, startSession } from '../dist/index.js';
import { tempDir } from './helpers/temp-dir.mjs';

const ALL = (1n << 64n) - 1n;

test('dotnet-trace provider syntax: Name[:Keywords[:Level[:args]]], comma separated', () => {
  assert.deepEqual(parseProviderSpec('Demo.App:0x1:4,Other'), [
    { name: 'Demo.App', keywords: 1n, level: Level.Informational, arguments: {} },
    { name: 'Other', keywords: ALL, level: Level.Verbose, arguments: {} },
  ]);
  assert.deepEqual(parseProviderSpec('Name:0xff:2:key=value;key2="a;b"'), [
    { name: 'Name', keywords: 0xffn, level: Level.Error, arguments: { key: 'value', key2: 'a;b' } },
  ]);
});

test('provider spec variants: bare hex, empty and * keywords, level names, spaces, quoted separators', () => {
  const one = (s) => parseProviderSpec(s)[0];
  assert.equal(one('P:ff').keywords, 0xffn);
  assert.equal(one('P:FFFFFFFFFFFFFFFF').keywords, ALL);
  assert.deepEqual([one('P::2').keywords, one('P::2').level], [ALL, 2]);
  assert.deepEqual([one('P:*:warning').keywords, one('P:*:Warning').level], [ALL, Level.Warning]);
  assert.equal(one('P:1:LogAlways').level, Level.LogAlways);
  assert.equal(one('P:1:').level, Level.Verbose);
  assert.deepEqual(parseProviderSpec(' A , B:0x2 ').map((p) => [p.name, p.keywords]), [['A', ALL], ['B', 2n]]);
  assert.deepEqual(one('P:1:4:url=http://x:8080/a;list="x,y"').arguments, { url: 'http://x:8080/a', list: 'x,y' });
  assert.deepEqual(one('P:1:4:').arguments, {});
});

test('Object.prototype names in a provider spec: no level is named constructor or __proto__, and __proto__ is an argument key like any other', () => {
  for (const level of ['constructor', '__proto__', 'hasOwnProperty']) {
    assert.throws(() => parseProviderSpec(`P:1:${level}`), (e) => e instanceof ProviderSpecError && e.message.includes(`bad level '${level}'`));
  }
  const args = parseProviderSpec('P:1:4:__proto__=x;toString=y')[0].arguments;
  assert.deepEqual(Object.entries(args), [['__proto__', 'x'], ['toString', 'y']]);
  assert.equal(Object.getPrototypeOf(args), Object.prototype);
});

test('bad provider specs fail with a one-line ProviderSpecError', () => {
  const cases = [
    ['', /empty provider spec/],
    ['   ', /empty provider spec/],
    ['A,,B', /empty provider entry in 'A,,B'/],
    ['A,', /empty provider entry/],
    ['1bad', /bad provider name '1bad'/],
    [':0x1', /bad provider name ''/],
    ['A:xyz', /bad keywords 'xyz' in 'A:xyz': expected a hex mask/],
    ['A:0x12345678901234567', /bad keywords/],
    ['A:-1', /bad keywords/],
    ['A:0x1:9', /bad level '9'/],
    ['A:0x1:Loud', /bad level 'Loud'/],
    ['A:0x1:4:novalue', /bad argument 'novalue' in 'A:0x1:4:novalue': expected key=value/],
    ['A:0x1:4:=v', /bad argument '=v'/],
    ['A:0x1:4:k="open', /unterminated quote/],
  ];
  for (const [spec, pattern] of cases) {
    assert.throws(
      () => parseProviderSpec(spec),
      (e) => e instanceof ProviderSpecError && pattern.test(e.message) && !e.message.includes('\n'),
      `spec ${JSON.stringify(spec)}`,
    );
  }
  assert.throws(() => parseProviderSpec(undefined), ProviderSpecError);
});

test('startSession rejects bad options with a one-line error and leaves no session behind', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'x.tptrace');
  const cases = [
    [{ providers: 'A', output: file, bufferingMode: 'fast' }, SessionError, /bufferingMode must be 'drop', 'block' or 'ring', not "fast"/],
    [{ providers: 'A', output: file, bufferingMode: 1 }, SessionError, /bufferingMode must be/],
    [{ providers: 'A', output: '' }, SessionError, /output path is empty/],
    [{ providers: 'A', output: {} }, SessionError, /^output must be a file path, \{ stream: Writable \}, \{ onEvent\(e\) \{\} \}/],
    [{ providers: 'A', output: { stream: {} } }, SessionError, /output must be/],
    [{ providers: 'A', output: { onEvent: 'no' } }, SessionError, /output must be/],
    [{ providers: 'A' }, SessionError, /output must be/],
    [{ providers: 'A', output: 42 }, SessionError, /output must be/],
    [{ providers: '', output: file }, ProviderSpecError, /empty provider spec/],
    [{ providers: 'A:zz', output: file }, ProviderSpecError, /bad keywords 'zz'/],
    [{ providers: [], output: file }, ProviderSpecError, /non-empty array/],
    [{ providers: 42, output: file }, ProviderSpecError, /non-empty array/],
    [{ providers: [{ name: '9' }], output: file }, ProviderSpecError, /bad provider entry "9"/],
    [{ providers: [{ name: 'A', keywords: 1 }], output: file }, ProviderSpecError, /keywords of 'A' must be a non-negative bigint/],
    [{ providers: [{ name: 'A', keywords: -1n }], output: file }, ProviderSpecError, /keywords of 'A'/],
    [{ providers: [{ name: 'A', level: 6 }], output: file }, ProviderSpecError, /level of 'A' must be 0-5/],
    [{ providers: 'A', output: file, bufferSizeMB: 'big' }, SessionError, /bufferSizeMB must be a number/],
    [{ providers: 'A', output: file, bufferSizeMB: NaN }, SessionError, /bufferSizeMB must be a number/],
    [{ providers: 'A', output: file, bufferSizeMB: 0.001 }, RangeError, /bufferSizeMB must be at least 1\/64/],
    [{ providers: 'A', output: file, bufferSizeMB: 5000 }, RangeError, /bufferSizeMB must be at most 2047/],
    [undefined, SessionError, /needs an options object/],
  ];
  for (const [options, type, pattern] of cases) {
    await assert.rejects(
      startSession(options),
      (e) => e instanceof type && pattern.test(e.message) && !e.message.includes('\n'),
      `options ${JSON.stringify(options, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))}`,
    );
  }
  assert.equal(liveSessions().length, 0);
});

test('an output file that cannot be created fails startSession with the reason', async (t) => {
  const dir = await tempDir(t);
  await assert.rejects(
    startSession({ providers: 'A', output: join(dir, 'missing-dir', 'x.tptrace') }),
    (e) => e instanceof SessionError && /^cannot start session: .*ENOENT/.test(e.message) && !e.message.includes('\n'),
  );
  assert.equal(liveSessions().length, 0);
});

test('a bad option is refused before anything exists: the output file is untouched and the process ends on its own', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'keep.tptrace');
  writeFileSync(file, 'an earlier trace the user wants to keep');
  // Each value as JavaScript source, for the child.
  const bad = [
    ['stopTimeoutMs', '-1'],
    ['stopTimeoutMs', '0'],
    ['stopTimeoutMs', '0.5'],
    ['stopTimeoutMs', 'NaN'],
    ['stopTimeoutMs', 'Infinity'],
    ['stopTimeoutMs', '2 ** 31'],
    ['stopTimeoutMs', "'100'"],
    ['keepProcessAlive', "'yes'"],
    ['keepProcessAlive', '1'],
    ['rundown', "'no'"],
    ['bufferingMode', "'fast'"],
    ['bufferSizeMB', "'big'"],
    ['bufferSizeMB', '0.001'],
    ['providers', "''"],
  ];
  // In a child process: a drain thread created by mistake would keep it alive (and truncate the file).
  const src = `
    const { liveSessions, startSession } = await import(${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)});
    const out = [];
    for (const [name, value] of [${bad.map(([name, value]) => `[${JSON.stringify(name)}, ${value}]`).join(', ')}]) {
      try {
        await startSession({ providers: 'A', output: ${JSON.stringify(file)}, [name]: value });
        out.push([name, 'started']);
      } catch (e) {
        out.push([name, e.name + ': ' + e.message]);
      }
    }
    out.push(['live', liveSessions().length]);
    console.log(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', src], { timeout: 30_000, encoding: 'utf8' });
  assert.equal(r.error, undefined, 'the process must end on its own');
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out.pop(), ['live', 0]);
  const expected = {
    stopTimeoutMs: /^SessionError: stopTimeoutMs must be a number of milliseconds from 1 to 2147483647, not /,
    keepProcessAlive: /^SessionError: keepProcessAlive must be a boolean$/,
    rundown: /^SessionError: rundown must be a boolean$/,
    bufferingMode: /^SessionError: bufferingMode must be/,
    bufferSizeMB: /^(SessionError: bufferSizeMB must be a number|RangeError: tracepipe: bufferSizeMB must be at least)/,
    providers: /^ProviderSpecError: empty provider spec/,
  };
  assert.equal(out.length, bad.length);
  out.forEach(([name, message], i) => assert.match(message, expected[name], `${name} = ${bad[i][1]}`));
  assert.equal(readFileSync(file, 'utf8'), 'an earlier trace the user wants to keep');
});
