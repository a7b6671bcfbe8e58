// How many times V8 optimises the writers of many event types of one layout: 20 counters (one f64
// value each, as a counters publication writes ~50), each set 15,000 times in turns that yield, in a
// session to a file; `node --trace-opt` counts the optimised compilations of functions named `write`.
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const description = 'optimised compilations of the writers of 20 counters of one layout (node --trace-opt): one shared writer, or one a type';

const TYPES = 20;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const child = `
const { startSession, defineProvider } = await import(${JSON.stringify(pathToFileURL(`${ROOT}dist/index.js`).href)});
const { mkdtempSync, rmSync } = await import('node:fs');
const { tmpdir } = await import('node:os');
const dir = mkdtempSync(tmpdir() + '/tracepipe-writer-compilations-');
const counters = {};
for (let i = 1; i <= ${TYPES}; i++) counters['C' + i] = { id: i, unit: 'items' };
const p = defineProvider('Bench.Counters', { counters });
const session = await startSession({ providers: 'Bench.Counters', output: dir + '/c.tptrace' });
for (let turn = 0; turn < 300; turn++) {
  for (let i = 1; i <= ${TYPES}; i++) for (let k = 0; k < 50; k++) p['C' + i].set(k);
  await new Promise((r) => setImmediate(r));
}
await session.stop();
rmSync(dir, { recursive: true, force: true });
`;

export async function run() {
  const out = execFileSync(process.execPath, ['--trace-opt', '--input-type=module', '-e', child], { encoding: 'utf8', timeout: 120_000 });
  const compilations = out.split('\n').filter((l) => /completed optimizing.*\bwrite\b/.test(l)).length;
  console.log(`  ${TYPES} counter types of one layout: ${compilations} optimised compilation(s) of their writers`);
  return [{ check: `writers of ${TYPES} counters of one layout: optimised compilations`, value: String(compilations), target: 'report it', met: null }];
}
