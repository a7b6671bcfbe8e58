// Issue 22: a source-mapped frame is shown at its original location, at export time. withSourceMaps
// over a CpuProfile: scripts found by the frame's URL, maps by comment, inline or beside the script,
// checked against Mozilla's source-map; what it leaves alone; what it counts instead of throwing; and
// CpuProfileBuilder.finishForViews, the views' way in, on a trace of sampler events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SourceMapConsumer } from 'source-map';
import { CpuProfileBuilder, frameLabel, functionTimes } from '../dist/analysis/cpu-profile.js';
import { SourceMapper, sourceMapNotes, withSourceMaps } from '../dist/analysis/source-maps.js';
import { readTrace } from '../dist/index.js';
import { compileTs, SAMPLE_TS } from './helpers/compiled-scripts.mjs';
import { tempDir } from './helpers/temp-dir.mjs';
import { writeTrace } from './helpers/trace-builder.mjs';

/** A CpuProfile with just these frames (no samples): what withSourceMaps reads. */
function profileOf(frames) {
  return { frames, stackFrame: new Int32Array(0), stackParent: new Int32Array(0), threads: new Map(), unresolvedSamples: 0, lost: {}, restarts: 0 };
}

/** One frame at each generated position that exactly one mapping of the map starts at, 1-based as V8 gives them. */
async function framesAtMappings(mapText, mapUrl, url) {
  const consumer = await new SourceMapConsumer(mapText, mapUrl);
  try {
    const at = new Map();
    consumer.eachMapping((m) => {
      const key = `${m.generatedLine}:${m.generatedColumn}`;
      at.set(key, at.has(key) ? null : m);
    });
    return [...at.values()].filter((m) => m !== null && m.source !== null).map((m) => ({
      frame: { functionName: `f${m.generatedLine}_${m.generatedColumn}`, url, line: m.generatedLine, column: m.generatedColumn + 1 },
      original: consumer.originalPositionFor({ line: m.generatedLine, column: m.generatedColumn }),
    }));
  } finally {
    consumer.destroy();
  }
}

function stripMapComment(script) {
  writeFileSync(script, readFileSync(script, 'utf8').replace(/\/\/# sourceMappingURL=\S+\s*$/, ''));
}

test('withSourceMaps puts every frame at source-map’s original position: a map named by the comment, an inline map, a .map beside the script; file: URLs and paths', async (t) => {
  const dir = await tempDir(t);
  const named = compileTs(dir, 'named.ts', SAMPLE_TS);
  const inline = compileTs(dir, 'inline.ts', SAMPLE_TS, { inline: true });
  const beside = compileTs(dir, 'beside.ts', SAMPLE_TS);
  stripMapComment(beside.script);
  assert.doesNotMatch(readFileSync(beside.script, 'utf8'), /sourceMappingURL/);
  const inlineMap = Buffer.from(/base64,(\S+)/.exec(readFileSync(inline.script, 'utf8'))[1], 'base64').toString();
  const cases = [
    ...(await framesAtMappings(readFileSync(named.map, 'utf8'), pathToFileURL(named.map).href, pathToFileURL(named.script).href)),
    ...(await framesAtMappings(inlineMap, pathToFileURL(inline.script).href, inline.script)),
    ...(await framesAtMappings(readFileSync(beside.map, 'utf8'), pathToFileURL(beside.map).href, beside.script)),
  ];
  const mapped = withSourceMaps(profileOf(cases.map((c) => c.frame)));
  assert.equal(mapped.frames.length, cases.length);
  cases.forEach(({ frame, original }, i) => {
    const source = frame.url.startsWith('file:') ? original.source : fileURLToPath(original.source);
    assert.deepEqual(mapped.frames[i], { functionName: frame.functionName, url: source, line: original.line, column: original.column + 1, generated: frame }, `${frame.url} ${frame.line}:${frame.column}`);
  });
  assert.ok(cases.length > 100, `${cases.length} frames`);
  assert.deepEqual(mapped.sourceMaps, { mappedScripts: 3, mappedFrames: cases.length, unreadableScripts: [], failedMaps: [] });
  assert.deepEqual(sourceMapNotes(mapped.sourceMaps), [`${cases.length} frames of 3 scripts shown at their original location through source maps`]);
});

test('a SourceMapper maps frames one at a time (for views that write frames as they come) as withSourceMaps does', async (t) => {
  const dir = await tempDir(t);
  const { script } = compileTs(dir, 'stream.ts', SAMPLE_TS);
  const frames = (await framesAtMappings(readFileSync(`${script}.map`, 'utf8'), pathToFileURL(`${script}.map`).href, script)).map((c) => c.frame);
  frames.push({ functionName: 'gone', url: join(dir, 'gone.js'), line: 1, column: 1 });
  const whole = withSourceMaps(profileOf(frames));
  const mapper = new SourceMapper();
  assert.deepEqual(frames.map((f) => mapper.map(f)), whole.frames);
  assert.deepEqual(mapper.summary(), whole.sourceMaps);
  assert.deepEqual(whole.sourceMaps.unreadableScripts, [join(dir, 'gone.js')]);
});

test('the map a script names: //# and //@ comments, /*# */, comments and blank lines after it, percent-encoded data: URLs; text in a string literal is not a comment', async (t) => {
  const dir = await tempDir(t);
  // One mapping: generated 0:0 → the source's 0:0, named "original".
  const map = (source) => JSON.stringify({ version: 3, sources: [source], names: ['original'], mappings: 'AAAAA' });
  writeFileSync(join(dir, 'm.map'), map('from-file.ts'));
  const scripts = {
    hash: 'function a() {}\n//# sourceMappingURL=m.map\n',
    at: 'function a() {}\n//@ sourceMappingURL=m.map',
    block: 'function a() {}\n/*# sourceMappingURL=m.map */\n',
    followed: 'function a() {}\n//# sourceMappingURL=m.map\n\n// built by hand\n   \n',
    percent: `function a() {}\n//# sourceMappingURL=data:application/json;charset=utf-8,${encodeURIComponent(map('from-data.ts'))}\n`,
    literal: 'const s = "\\n//# sourceMappingURL=m.map";\nfunction a() {}\n',
  };
  const frames = Object.entries(scripts).map(([name, text]) => {
    writeFileSync(join(dir, `${name}.js`), text);
    return { functionName: 'a', url: join(dir, `${name}.js`), line: 1, column: 1 };
  });
  const mapped = withSourceMaps(profileOf(frames));
  const shown = Object.fromEntries(Object.keys(scripts).map((name, i) => [name, mapped.frames[i].generated ? `${mapped.frames[i].functionName} ${mapped.frames[i].url}` : 'unmapped']));
  assert.deepEqual(shown, {
    hash: `original ${join(dir, 'from-file.ts')}`,
    at: `original ${join(dir, 'from-file.ts')}`,
    block: `original ${join(dir, 'from-file.ts')}`,
    followed: `original ${join(dir, 'from-file.ts')}`,
    percent: `original ${join(dir, 'from-data.ts')}`,
    literal: 'unmapped',
  });
  assert.deepEqual(mapped.sourceMaps.failedMaps, []);
});

test('withSourceMaps leaves alone frames with no script file, no position, no map, or a position the map does not cover, and reports none of them', async (t) => {
  const dir = await tempDir(t);
  const { script } = compileTs(dir, 'plain.ts', SAMPLE_TS);
  const noMap = join(dir, 'no-map.js');
  writeFileSync(noMap, 'function f() {}\n');
  const frames = [
    { functionName: 'readFileSync', url: 'node:fs', line: 441, column: 10 },
    { functionName: '(program)', url: '', line: 0, column: 0 },
    { functionName: 'remote', url: 'https://example.test/app.js', line: 1, column: 1 },
    { functionName: 'f', url: noMap, line: 1, column: 11 },
    { functionName: 'unknownPosition', url: script, line: 0, column: 0 },
    { functionName: 'pastTheEnd', url: script, line: 10_000, column: 1 },
  ];
  const mapped = withSourceMaps(profileOf(frames));
  assert.deepEqual(mapped.frames, frames);
  assert.deepEqual(mapped.sourceMaps, { mappedScripts: 0, mappedFrames: 0, unreadableScripts: [], failedMaps: [] });
  assert.deepEqual(sourceMapNotes(mapped.sourceMaps), []);
});

test('a missing, unreadable or malformed map leaves its frames as they are and is reported once per script, never thrown', async (t) => {
  const dir = await tempDir(t);
  const script = (name, text) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const scripts = {
    missing: script('missing.js', 'function a() {}\n//# sourceMappingURL=gone.js.map\n'),
    notJson: script('not-json.js', 'function a() {}\n'),
    version2: script('version2.js', 'function a() {}\n//@ sourceMappingURL=v2.map\n// a comment after it\n\n'),
    mediaType: script('media.js', `function a() {}\n//# sourceMappingURL=data:text/plain;base64,${Buffer.from('{}').toString('base64')}\n`),
    remote: script('remote.js', 'function a() {}\n//# sourceMappingURL=https://example.test/remote.js.map\n'),
    directory: script('directory.js', 'function a() {}\n//# sourceMappingURL=.\n'),
  };
  writeFileSync(`${scripts.notJson}.map`, '{"version": 3, "mappings": ');
  writeFileSync(join(dir, 'v2.map'), JSON.stringify({ version: 2, sources: [], names: [], mappings: '' }));
  const deleted = script('deleted.js', '');
  rmSync(deleted);
  const urls = [...Object.values(scripts), deleted];
  // Two frames per script, one by path and one by file: URL, and one more by path: each script is looked at once.
  const frames = urls.flatMap((path) => [path, pathToFileURL(path).href, path].map((url, i) => ({ functionName: `a${i}`, url, line: 1, column: 11 })));
  const mapped = withSourceMaps(profileOf(frames));
  assert.deepEqual(mapped.frames, frames);
  const { failedMaps, unreadableScripts } = mapped.sourceMaps;
  assert.deepEqual(unreadableScripts, [deleted]);
  const expected = [
    [scripts.missing, /\(gone\.js\.map\) could not be read: ENOENT/],
    [scripts.notJson, /\(.*not-json\.js\.map\) is not usable: not JSON/],
    [scripts.version2, /\(v2\.map\) is not usable: version 2: only version 3 is read/],
    [scripts.mediaType, /\(inline\) could not be read: a data: URL of media type 'text\/plain', not application\/json/],
    [scripts.remote, /https:\/\/example\.test\/remote\.js\.map is not a file/],
    [scripts.directory, /could not be read: EISDIR/],
  ];
  assert.equal(failedMaps.length, expected.length, failedMaps.join('\n'));
  for (const [path, why] of expected) {
    const lines = failedMaps.filter((l) => l.startsWith(`the source map of ${path} (`));
    assert.equal(lines.length, 1, `${path}: ${failedMaps.join('\n')}`);
    assert.match(lines[0], why);
    assert.match(lines[0], /its frames keep the generated location$/);
  }
  const notes = sourceMapNotes(mapped.sourceMaps);
  assert.deepEqual(notes, [`1 script could not be read to look for a source map (${deleted}): their frames keep the generated location`, ...failedMaps]);
});

// Runtime.CpuSampler's events as docs/FORMAT.md ("CPU samples") lays them out.
const sampler = (name, id, fields) => ({ provider: 'Runtime.CpuSampler', name, id, version: 0, level: 4, keywords: 1n, fields });
const FRAME = sampler('Frame', 1, [['frameId', 'u32'], ['functionName', 'string'], ['url', 'string'], ['line', 'u32'], ['column', 'u32']]);
const STACK = sampler('Stack', 2, [['stackId', 'u32'], ['frameId', 'u32'], ['parentId', 'u32']]);
const SAMPLE = sampler('Sample', 3, [['stackId', 'u32'], ['thread', 'u32']]);

/** The 1-based line and column of the `(` of function or method `name`'s definition in `text`. */
function positionOf(text, name) {
  const definition = new RegExp(`^(\\s*(?:export\\s+)?(?:async\\s+)?(?:function\\s+)?${name})\\(`);
  const lines = text.split('\n');
  const line = lines.findIndex((l) => definition.test(l));
  assert.ok(line >= 0, `${name}'s definition in the text`);
  return { line: line + 1, column: definition.exec(lines[line])[1].length + 1 };
}

test('finishForViews (what the views call) applies source maps by default: the hot function of a compiled script tops the list at its .ts location; { sourceMaps: false } keeps the .js', async (t) => {
  const dir = await tempDir(t);
  const { ts, script } = compileTs(dir, 'sample.ts', SAMPLE_TS);
  // V8 places a function at the '(' of its parameters.
  const area = positionOf(readFileSync(script, 'utf8'), 'area');
  const total = positionOf(readFileSync(script, 'utf8'), 'total');
  let seq = 0;
  const ev = (type, values, ts = 1000) => ({ type, threadId: 1, sequence: seq++, timestampNs: ts, values });
  const events = [
    ev(FRAME, [1, 'total', pathToFileURL(script).href, total.line, total.column]),
    ev(FRAME, [2, 'area', pathToFileURL(script).href, area.line, area.column]),
    ev(FRAME, [3, 'readFileSync', 'node:fs', 441, 10]),
    ev(STACK, [1, 1, 0]),
    ev(STACK, [2, 2, 1]),
    ev(STACK, [3, 3, 1]),
  ];
  for (let i = 0; i < 100; i++) events.push(ev(SAMPLE, [i % 10 === 0 ? 3 : 2, 1], 1_000_000 * (i + 1)));
  const file = join(dir, 'samples.tptrace');
  await writeTrace(file, [FRAME, STACK, SAMPLE], events);
  const profiles = async (options) => {
    const builder = new CpuProfileBuilder();
    for await (const e of readTrace(file)) builder.add(e);
    return builder.finishForViews(options);
  };

  const mapped = await profiles();
  const top = mapped.frames[functionTimes(mapped).functions[0].frame];
  const tsText = readFileSync(ts, 'utf8');
  assert.deepEqual({ ...top, generated: undefined }, { functionName: 'area', url: pathToFileURL(ts).href, ...positionOf(tsText, 'area'), generated: undefined });
  assert.equal(frameLabel(top), `area (sample.ts:${positionOf(tsText, 'area').line})`);
  assert.deepEqual(top.generated, { functionName: 'area', url: pathToFileURL(script).href, ...area });
  const caller = mapped.frames.find((f) => f.functionName === 'total');
  assert.equal(caller.line, positionOf(tsText, 'total').line);
  assert.deepEqual(mapped.frames.find((f) => f.url === 'node:fs'), { functionName: 'readFileSync', url: 'node:fs', line: 441, column: 10 });
  assert.deepEqual(mapped.sourceMaps, { mappedScripts: 1, mappedFrames: 2, unreadableScripts: [], failedMaps: [] });

  const unmapped = await profiles({ sourceMaps: false });
  const plain = unmapped.frames[functionTimes(unmapped).functions[0].frame];
  assert.deepEqual(plain, { functionName: 'area', url: pathToFileURL(script).href, ...area });
  assert.equal(unmapped.sourceMaps, undefined);
});

/** A TypeScript program that spends its time in hotSpot; the declarations before it move its line in the emitted script. */
const HOT_TS = `// Spends most of its time in hotSpot, synchronously.
declare const process: { argv: string[] };

interface SpinOptions {
  readonly ms: number;
}

type Step = (x: number) => number;

enum Mode { Fast, Slow }

function spinFor(options: SpinOptions, step: Step): number {
  const end = Date.now() + options.ms;
  let x = Mode.Fast;
  while (Date.now() < end) x = step(x);
  return x;
}

function hotSpot(x: number): number {
  for (let i = 0; i < 100_000; i++) x = (x * 1103515245 + 12345) % 2147483648;
  return x;
}

spinFor({ ms: Number(process.argv[2]) }, hotSpot);
`;

test('end to end: a TypeScript-compiled script traced with Runtime.CpuSampler has its hot function at its .ts location', { timeout: 120_000 }, async (t) => {
  const dir = await tempDir(t);
  const { ts, script } = compileTs(dir, 'hot.ts', HOT_TS);
  const generated = positionOf(readFileSync(script, 'utf8'), 'hotSpot');
  const original = positionOf(HOT_TS, 'hotSpot');
  assert.notEqual(generated.line, original.line, 'the emitted script puts hotSpot on another line');
  const file = join(dir, 'hot.tptrace');
  const child = spawn(process.execPath, [`--import=${new URL('../dist/register.js', import.meta.url).href}`, script, '1000'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: 'Runtime.CpuSampler', TRACEPIPE_OUTPUT: file },
  });
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const [code] = await once(child, 'close');
  assert.equal(code, 0, err);

  const builder = new CpuProfileBuilder();
  for await (const e of readTrace(file)) builder.add(e);
  const profile = builder.finishForViews();
  const top = profile.frames[functionTimes(profile).functions[0].frame];
  assert.equal(top.functionName, 'hotSpot');
  // V8 names a CommonJS script by its path and an ES module by its file: URL; the source follows suit.
  assert.equal(top.url.startsWith('file:') ? fileURLToPath(top.url) : top.url, ts);
  assert.deepEqual({ line: top.line, column: top.column }, original);
  assert.deepEqual({ line: top.generated.line, column: top.generated.column }, generated, 'V8 gave the emitted script’s position');
  assert.equal(frameLabel(top), `hotSpot (hot.ts:${original.line})`);
  assert.deepEqual(profile.sourceMaps.failedMaps, []);
  assert.ok(profile.sourceMaps.mappedScripts >= 1);
});
