// One variant of the disabled-span benchmark, in its own process: `direct` (fn()) or `run` (Query.run(fn, sql), no session).
import { defineProvider } from '../../dist/index.js';
import { reportTimedLoop } from '../support/timed-loop.mjs';

const [variant, itersArg, batchesArg] = process.argv.slice(2);
const ITERS = Number(itersArg);
const BATCHES = Number(batchesArg);
const { Query } = defineProvider('Bench.Disabled', { spans: { Query: { id: 1, fields: [['sql', 'string']], endFields: [['rows', 'u32']] } } });

// fn changes state, so neither loop can fold its calls away; the sums are printed.
let x = 0;
const fn = () => ++x;

function direct(n) {
  let sink = 0;
  for (let i = 0; i < n; i++) sink += fn();
  return sink;
}

function run(n) {
  let sink = 0;
  for (let i = 0; i < n; i++) sink += Query.run(fn, 'select 1');
  return sink;
}

const loop = { direct, run }[variant];
if (!loop) throw new Error(`unknown variant ${variant}`);
if (Query.enabled) throw new Error('the span must be disabled (no session)');

reportTimedLoop(variant, loop, ITERS, BATCHES);
