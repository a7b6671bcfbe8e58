// What applying source maps costs a view (issue 22; it runs by default when a CPU profile is shown):
// 1. withSourceMaps over a profile with a frame at the first '(' of every line of every script of
//    tracepipe's own build (dist/, a .map beside each script, named by its comment): scripts read and
//    maps decoded once each, every frame looked up;
// 2. decoding one large map (1,000,000 mappings over 20,000 lines, written by source-map's
//    SourceMapGenerator) and looking up 10,000 positions, against Mozilla's source-map doing the same.
// Run alone: `node bench/source-maps.mjs` (after `npm run build`).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SourceMapConsumer, SourceMapGenerator } from 'source-map';
import { decodeSourceMap } from '../dist/analysis/source-map-decoder.js';
import { withSourceMaps } from '../dist/analysis/source-maps.js';
import { median } from './support/stats.mjs';

const ROUNDS = 5;
const DIST = fileURLToPath(new URL('../dist/', import.meta.url));

export const description = 'issue 22: applying source maps to a CPU profile (tracepipe\'s own build as the program), and decoding a 1,000,000-mapping map against source-map';

function scriptsOf(dir) {
  return readdirSync(dir, { recursive: true }).filter((f) => f.endsWith('.js')).map((f) => join(dir, f));
}

/** A frame at the first '(' of every line that has one, as V8 places functions. */
function framesOf(scripts) {
  return scripts.flatMap((path) =>
    readFileSync(path, 'utf8').split('\n').flatMap((line, i) => {
      const column = line.indexOf('(');
      return column < 0 ? [] : [{ functionName: `f${i}`, url: pathToFileURL(path).href, line: i + 1, column: column + 1 }];
    }),
  );
}

function profileOf(frames) {
  return { frames, stackFrame: new Int32Array(0), stackParent: new Int32Array(0), threads: new Map(), unresolvedSamples: 0, lost: {}, restarts: 0 };
}

/** A map of `count` mappings in `lines` lines, from a fixed generator (mulberry32), three sources and a few names. */
function largeMap(count, lines) {
  let a = 22;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const g = new SourceMapGenerator({ file: 'bundle.js' });
  const perLine = count / lines;
  for (let line = 1; line <= lines; line++) {
    for (let k = 0; k < perLine; k++) {
      g.addMapping({ generated: { line, column: k * 7 }, source: ['a.ts', 'b.ts', 'c.ts'][k % 3], original: { line: 1 + Math.floor(random() * 50_000), column: Math.floor(random() * 80) }, ...(k % 5 === 0 ? { name: `n${k % 17}` } : {}) });
    }
  }
  return { text: g.toString(), lines, widest: perLine * 7 };
}

const ms = (v) => `${v.toFixed(1)} ms`;

export async function run() {
  const scripts = scriptsOf(DIST);
  const frames = framesOf(scripts);
  const applyTimes = [];
  let summary;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    summary = withSourceMaps(profileOf(frames)).sourceMaps;
    applyTimes.push(performance.now() - t0);
  }
  const apply = median(applyTimes);
  console.log(`  withSourceMaps: ${scripts.length} scripts, ${frames.length} frames (${summary.mappedFrames} mapped): median ${ms(apply)} (${((apply * 1e6) / frames.length).toFixed(0)} ns a frame, all reads and decoding included)`);

  const map = largeMap(1_000_000, 20_000);
  const positions = Array.from({ length: 10_000 }, (_, i) => [(i * 7919) % map.lines, (i * 104_729) % map.widest]);
  const ours = [];
  const theirs = [];
  for (let r = 0; r < ROUNDS; r++) {
    let t0 = performance.now();
    const mine = decodeSourceMap(map.text, 'file:///app/bundle.js.map');
    for (const [line, column] of positions) mine.originalPositionFor(line, column);
    ours.push(performance.now() - t0);
    t0 = performance.now();
    const consumer = await new SourceMapConsumer(map.text, 'file:///app/bundle.js.map');
    for (const [line, column] of positions) consumer.originalPositionFor({ line: line + 1, column });
    theirs.push(performance.now() - t0);
    consumer.destroy();
  }
  const [o, t] = [median(ours), median(theirs)];
  console.log(`  a ${(map.text.length / 1e6).toFixed(1)} MB map of 1,000,000 mappings, decoded and 10,000 positions looked up: ours median ${ms(o)}, source-map ${ms(t)} (ratio ${(o / t).toFixed(2)})`);
  return [
    { check: 'source maps applied to every line of tracepipe\'s build', value: `${ms(apply)} for ${frames.length} frames in ${scripts.length} scripts`, met: null },
    { check: 'decoding a 1,000,000-mapping map, ours / source-map', value: (o / t).toFixed(2), met: null },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await run();
