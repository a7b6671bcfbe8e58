// A node:test reporter (`--test-reporter=<this file>`) that prints one JSON line per test: its file,
// the names from its top-level test down to it, and how it ended; and one per line a test file's
// process wrote to stderr. suite-differential.mjs compares two runs of the same suite with it, test
// by test.

export default async function* testOutcomes(source) {
  // Per file, the names of the tests under way at each nesting level: node:test reports a test's
  // start in declaration order, just before its result and its subtests'.
  const open = new Map();
  for await (const { type, data } of source) {
    if (type === 'test:stderr') yield `${JSON.stringify({ file: data.file ?? '', stderr: data.message })}\n`;
    if (type !== 'test:start' && type !== 'test:pass' && type !== 'test:fail') continue;
    const file = data.file ?? '';
    const names = open.get(file) ?? [];
    open.set(file, names);
    if (type === 'test:start') {
      names.length = data.nesting;
      names.push(data.name);
      continue;
    }
    const path = [...names.slice(0, data.nesting), data.name];
    const outcome = data.skip !== undefined ? 'skip' : data.todo !== undefined ? 'todo' : type === 'test:pass' ? 'pass' : 'fail';
    const error = type === 'test:fail' ? errorText(data.details?.error) : undefined;
    yield `${JSON.stringify({ file, path, outcome, ...(error ? { error } : {}) })}\n`;
  }
}

/** The failure's own message (node:test wraps it in a 'testCodeFailure' error), one line, bounded. */
function errorText(e) {
  const inner = e?.cause ?? e;
  const text = inner instanceof Error ? `${inner.name}: ${inner.message}` : String(inner);
  return text.replace(/\s+/g, ' ').slice(0, 300);
}
