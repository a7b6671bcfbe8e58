// Issue 22: the Source Map v3 decoder against Mozilla's source-map (an independent decoder) on real
// maps: TypeScript's (file and inline), esbuild's where it is installed, the project's own build, and
// an index map made of two of them. Then the maps it must refuse, and how.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { SourceMapConsumer, SourceMapGenerator } from 'source-map';
import { decodeSourceMap, SourceMapError } from '../dist/analysis/source-map-decoder.js';
import { compileTs, inlineMapOf, SAMPLE_TS } from './helpers/compiled-scripts.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const SEED = 22_0522;
const require = createRequire(import.meta.url);

const NOTHING = { source: null, line: null, column: null, name: null };

/** A consumer's mappings by generated line (1-based): [column, original position or NOTHING], in column order. */
function mappingsByLine(consumer) {
  const byLine = new Map();
  consumer.eachMapping((m) => {
    if (!byLine.has(m.generatedLine)) byLine.set(m.generatedLine, []);
    byLine.get(m.generatedLine).push([m.generatedColumn, m.source === null ? NOTHING : { source: m.source, line: m.originalLine, column: m.originalColumn, name: m.name ?? null }]);
  });
  return byLine;
}

/**
 * Both decoders agree on `{line (1-based), column (0-based)}`: source, line, column and name, or
 * nothing. Where several mappings share the generated position found, source-map returns whichever
 * its binary search lands on (which one depends on how many there are), this decoder the first in
 * the map's order: then both must be among them.
 */
function assertAgree(mine, theirs, byLine, line, column) {
  const m = mine.originalPositionFor(line - 1, column);
  const ours = m ? { source: m.source, line: m.line + 1, column: m.column, name: m.name ?? null } : NOTHING;
  const t = theirs.originalPositionFor({ line, column });
  if (isDeepStrictEqual(ours, { ...t })) return;
  const onLine = byLine.get(line) ?? [];
  const at = onLine.filter(([c]) => c <= column).at(-1)?.[0];
  const tied = onLine.filter(([c]) => c === at).map(([, o]) => o);
  if (tied.length < 2) assert.deepEqual(ours, { ...t }, `generated ${line}:${column}`);
  assert.ok(tied.some((o) => isDeepStrictEqual(o, ours)) && tied.some((o) => isDeepStrictEqual(o, { ...t })), `generated ${line}:${column}: ${JSON.stringify(ours)} and ${JSON.stringify(t)} among ${JSON.stringify(tied)}`);
}

/**
 * Every mapping's position (and the columns either side of it), then random positions over the
 * generated file's lines and a little past them, fixed seed.
 */
async function assertSameAsMozilla(mapText, mapUrl, generated) {
  const mine = decodeSourceMap(mapText, mapUrl);
  const theirs = await new SourceMapConsumer(mapText, mapUrl);
  try {
    const byLine = mappingsByLine(theirs);
    const positions = [...byLine].flatMap(([line, ms]) => ms.map(([column]) => [line, column]));
    assert.ok(positions.length > 20, `a real map has mappings (${positions.length})`);
    for (const [line, column] of positions) {
      for (const c of [column - 1, column, column + 1]) if (c >= 0) assertAgree(mine, theirs, byLine, line, c);
    }
    const lines = generated.split('\n');
    const widest = Math.max(...lines.map((l) => l.length));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: lines.length + 2 }), fc.integer({ min: 0, max: widest + 5 }), (line, column) => assertAgree(mine, theirs, byLine, line, column)),
      { seed: SEED, numRuns: 2000 },
    );
  } finally {
    theirs.destroy();
  }
}

test('TypeScript --sourceMap: the same original position as source-map for every mapping and random positions', async (t) => {
  const dir = await tempDir(t);
  for (const [name, options] of [['plain.ts', {}], ['rooted.ts', { sourceRoot: 'https://example.test/src/' }], ['es2015.ts', { target: 'ES2015', module: 'ES2015' }]]) {
    const { script, map } = compileTs(dir, name, SAMPLE_TS, options);
    await assertSameAsMozilla(readFileSync(map, 'utf8'), pathToFileURL(map).href, readFileSync(script, 'utf8'));
  }
});

test('TypeScript --inlineSourceMap (a data:application/json;base64 URL): the same as source-map', async (t) => {
  const dir = await tempDir(t);
  const { script } = compileTs(dir, 'inline.ts', SAMPLE_TS, { inline: true });
  await assertSameAsMozilla(inlineMapOf(script), pathToFileURL(script).href, readFileSync(script, 'utf8'));
});

test('the project’s own build (tsc, sources in ../../src): the same as source-map', async () => {
  for (const file of ['analysis/source-map-decoder.js', 'format/trace-reader.js']) {
    const script = fileURLToPath(new URL(`../dist/${file}`, import.meta.url));
    await assertSameAsMozilla(readFileSync(`${script}.map`, 'utf8'), pathToFileURL(`${script}.map`).href, readFileSync(script, 'utf8'));
  }
});

test('esbuild (bundled and minified, with names): the same as source-map', async (t) => {
  let esbuild;
  try {
    esbuild = require('esbuild');
  } catch {
    t.skip('esbuild is not installed: it is no dependency of this project');
    return;
  }
  const dir = await tempDir(t);
  const { ts } = compileTs(dir, 'bundle.ts', SAMPLE_TS);
  const out = join(dir, 'bundle.js');
  await esbuild.build({ entryPoints: [ts], bundle: true, minify: true, sourcemap: true, outfile: out, platform: 'node' });
  await assertSameAsMozilla(readFileSync(`${out}.map`, 'utf8'), pathToFileURL(`${out}.map`).href, readFileSync(out, 'utf8'));
});

test('an index map (sections) of two TypeScript maps: the same as source-map', async (t) => {
  const dir = await tempDir(t);
  const first = compileTs(dir, 'first.ts', SAMPLE_TS);
  const second = compileTs(dir, 'second.ts', SAMPLE_TS.replaceAll('Circle', 'Disc'));
  const firstJs = readFileSync(first.script, 'utf8');
  const lines = firstJs.split('\n');
  // The second file starts in the middle of the first's last line, so a column offset is exercised.
  const offset = { line: lines.length - 1, column: lines[lines.length - 1].length };
  const index = JSON.stringify({
    version: 3,
    sections: [
      { offset: { line: 0, column: 0 }, map: JSON.parse(readFileSync(first.map, 'utf8')) },
      { offset, map: JSON.parse(readFileSync(second.map, 'utf8')) },
    ],
  });
  const mapUrl = pathToFileURL(join(dir, 'out', 'joined.js.map')).href;
  await assertSameAsMozilla(index, mapUrl, firstJs + readFileSync(second.script, 'utf8'));
});

test('random maps written by source-map’s SourceMapGenerator (several sources, names, mappings without a source, equal columns): the same as source-map', async () => {
  const mapping = fc.record({
    line: fc.integer({ min: 1, max: 12 }),
    column: fc.integer({ min: 0, max: 40 }),
    original: fc.option(fc.record({ source: fc.constantFrom('a.ts', 'lib/b.ts', '../c.ts'), line: fc.integer({ min: 1, max: 500 }), column: fc.integer({ min: 0, max: 120 }), name: fc.option(fc.constantFrom('f', 'g', 'hot', 'Klass')) })),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(mapping, { minLength: 1, maxLength: 60 }), fc.option(fc.constantFrom('', 'src', 'https://example.test/root/')), async (mappings, sourceRoot) => {
      const generator = new SourceMapGenerator({ file: 'out.js', ...(sourceRoot === null ? {} : { sourceRoot }) });
      for (const m of mappings) {
        const o = m.original;
        generator.addMapping({ generated: { line: m.line, column: m.column }, ...(o ? { source: o.source, original: { line: o.line, column: o.column }, ...(o.name === null ? {} : { name: o.name }) } : {}) });
      }
      const text = generator.toString();
      const mapUrl = 'file:///app/dist/out.js.map';
      const mine = decodeSourceMap(text, mapUrl);
      const theirs = await new SourceMapConsumer(text, mapUrl);
      try {
        const byLine = mappingsByLine(theirs);
        for (let line = 1; line <= 13; line++) for (let column = 0; column <= 42; column++) assertAgree(mine, theirs, byLine, line, column);
      } finally {
        theirs.destroy();
      }
    }),
    { seed: SEED, numRuns: 200 },
  );
});

test('hand-written mappings: unsorted columns, equal columns, segments without a source, names, a line with none', async () => {
  // Line 1: col 10 → a.js 0:0 "x", col 2 → a.js 1:4 (out of order), col 10 again → a.js 2:4;
  // line 2: empty; line 3: col 0 unmapped, col 5 → b.js 3:1.
  const map = JSON.stringify({ version: 3, sources: ['a.js', 'b.js'], names: ['x'], mappings: 'UAAAA,RACI,QACA;;A,KCCH' });
  const mapUrl = 'file:///app/out.js.map';
  const theirs = await new SourceMapConsumer(map, mapUrl);
  try {
    const mine = decodeSourceMap(map, mapUrl);
    const byLine = mappingsByLine(theirs);
    for (let line = 1; line <= 4; line++) for (let column = 0; column < 14; column++) assertAgree(mine, theirs, byLine, line, column);
  } finally {
    theirs.destroy();
  }
  const mine = decodeSourceMap(map, mapUrl);
  assert.deepEqual(mine.originalPositionFor(0, 12), { source: 'file:///app/a.js', line: 0, column: 0, name: 'x' }, 'of equal columns, the first in the map');
  assert.deepEqual(mine.originalPositionFor(0, 3), { source: 'file:///app/a.js', line: 1, column: 4, name: undefined });
  assert.equal(mine.originalPositionFor(2, 3), undefined, 'a segment without a source maps nothing');
  assert.deepEqual(mine.originalPositionFor(2, 9), { source: 'file:///app/b.js', line: 3, column: 1, name: undefined });
});

test('maps that cannot be read are refused with a SourceMapError that says what is wrong', () => {
  const base = { version: 3, sources: ['a.js'], names: ['n'], mappings: 'AAAA' };
  const refused = [
    ['{', /not JSON/],
    ['[1]', /not a JSON object/],
    [{ ...base, version: 2 }, /version 2: only version 3/],
    [{ ...base, mappings: 7 }, /"mappings" is not a string/],
    [{ ...base, sources: 'a.js' }, /"sources" is not an array/],
    [{ ...base, names: [1] }, /"names"\[0\] is not a string/],
    [{ ...base, sourceRoot: 1 }, /"sourceRoot" is not a string/],
    [{ ...base, mappings: 'AA!A' }, /"!" at 2, not a base64 digit/],
    [{ ...base, mappings: 'AAAg' }, /ends inside a value/],
    [{ ...base, mappings: 'AA' }, /segment of 2 values/],
    [{ ...base, mappings: 'AAAAAA' }, /more than 5 values/],
    [{ ...base, mappings: 'ACAA' }, /the source 1 .* outside 0\.\.0/],
    [{ ...base, mappings: 'AAAAC' }, /the name 1 .* outside 0\.\.0/],
    [{ ...base, mappings: 'D' }, /the generated column -1/],
    [{ ...base, mappings: 'gggggggB' }, /more than 32 bits/],
    [{ version: 3, sections: [{ offset: { line: 0, column: 0 }, url: 'a.js.map' }] }, /sections by reference are not supported/],
    [{ version: 3, sections: [{ offset: { line: 0, column: 0 }, map: { version: 3, sections: [] } }] }, /itself an index map/],
    [{ version: 3, sections: [{ offset: { line: 2, column: 0 }, map: base }, { offset: { line: 1, column: 0 }, map: base }] }, /section 1 begins before section 0/],
    [{ version: 3, sections: [{ offset: { line: -1, column: 0 }, map: base }] }, /offset is not a line and column/],
  ];
  for (const [map, why] of refused) {
    assert.throws(() => decodeSourceMap(typeof map === 'string' ? map : JSON.stringify(map), 'file:///x.js.map'), (e) => e instanceof SourceMapError && why.test(e.message), JSON.stringify(map));
  }
});
