// One source of truth per figure: a figure that README.md or docs/*.md quote in a sentence citing
// BENCHMARKS.md must be in BENCHMARKS.md, as recorded there (a range "a–b" when both ends are).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';

const ROOT = new URL('../', import.meta.url);
const read = (path) => readFileSync(new URL(path, ROOT), 'utf8').replace(/\s+/g, ' ');
const BENCHMARKS = read('BENCHMARKS.md');
const DOCS = ['README.md', ...readdirSync(new URL('docs/', ROOT)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** A number with its unit: "150 ns", "32×", "1.6–2.2 ms", "0.7–0.9 ms/s", "6 MiB", "8–11 %". */
const FIGURE = /(?<![\w.§])(\d+(?:[.,]\d+)*)(?:\s?[–-]\s?(\d+(?:[.,]\d+)*))?\s?(ns|µs|ms\/s|ms|s|×|%|MB|MiB|GiB|KiB|kB|M events\/s|M\/s)(?![\w/])/g;
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/**
 * `n` as a number of its own in BENCHMARKS.md (not part of a longer one), with `unit` after it when
 * given (past a range in brackets: "12.57 (0.01 … 13.69) µs").
 */
const recorded = (n, unit) => new RegExp(`(?<![\\w.,])${escape(n)}(?![\\d])${unit ? `(?:\\s?\\([^)]*\\))?\\s?${escape(unit)}` : ''}`).test(BENCHMARKS);

/** The figures of the sentences of `path` that cite BENCHMARKS.md. */
function quotedFigures(path) {
  const sentences = read(path).split(/(?<=\.)\s+(?=[A-Z(`*-])/).filter((s) => s.includes('BENCHMARKS.md'));
  return sentences.flatMap((s) => [...s.matchAll(FIGURE)].map((m) => ({ text: m[0], from: m[1], to: m[2], unit: m[3], sentence: s })));
}

test('every figure README.md and docs/ quote from BENCHMARKS.md is recorded there', () => {
  const missing = [];
  for (const path of DOCS) {
    for (const f of quotedFigures(path)) {
      // A range is quoted as recorded, or spans figures recorded in a table whose header has the unit.
      const ok = f.to === undefined ? recorded(f.from, f.unit) : recorded(`${f.from}–${f.to}`, f.unit) || (recorded(f.from) && recorded(f.to));
      if (!ok) missing.push(`${path}: "${f.text}" in "${f.sentence.slice(0, 160)}…"`);
    }
  }
  assert.deepEqual(missing, []);
});

test('the check finds what it should: figures of a sentence citing BENCHMARKS.md, with their units and ranges', () => {
  assert.deepEqual([...'spent 1.6–2.2 ms, 32× less, ~150 ns and 8 % (BENCHMARKS.md §16)'.matchAll(FIGURE)].map((m) => m[0]), ['1.6–2.2 ms', '32×', '150 ns', '8 %']);
  assert.ok(recorded('12.57', 'µs'), "the GC hook's cost inside a pause, BENCHMARKS.md §8");
  assert.ok(!recorded('12.5', 'µs') && !recorded('2.57', 'µs'), 'a number is not a part of a longer one');
});
