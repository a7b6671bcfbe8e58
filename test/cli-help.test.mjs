// Help on every command and subcommand, made from the same declaration as its parser; usage errors
// in one line of tracepipe's words (with a suggestion for a mistyped name) and the usage line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../dist/cli/command-list.js';
import { closestName, editDistance } from '../dist/cli/command/closest-name.js';
import { commandHelp, defaultText, exampleLine, groupHelp, usageText } from '../dist/cli/command/command-help.js';
import { parseCommand } from '../dist/cli/command/command-parse.js';
import { isGroup } from '../dist/cli/command/command-spec.js';

const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));

function cli(...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (err.killed ? `killed (${err.signal})` : err.code) : 0, stdout, stderr });
    });
  });
}

/** Every command that runs, subcommands included, each with the words that call it. */
const runnable = COMMANDS.flatMap((e) => (isGroup(e) ? e.subcommands : [e]));
const words = (spec) => spec.name.split(' ');

test('the walk covers every command file of the CLI', () => {
  const names = runnable.map((s) => s.name).sort();
  for (const expected of ['collect', 'convert', 'demo', 'dump', 'explain', 'gcdump collect', 'gcdump convert', 'gcdump diff', 'gcdump report', 'ps', 'query', 'recorder dump', 'report', 'stats', 'stop']) {
    assert.ok(names.includes(expected), `${expected} is declared`);
  }
});

test('each declaration is complete: every option says what happens without it, every command has examples', () => {
  for (const spec of runnable) {
    assert.ok(spec.examples.length >= 1 && spec.examples.length <= 3, `${spec.name}: one to three examples`);
    for (const [name, o] of Object.entries(spec.options)) {
      assert.ok(o.description.length > 0, `${spec.name} --${name} is described`);
      if (o.type === 'string') assert.ok(o.required || o.default !== undefined || o.defaultText !== undefined, `${spec.name} --${name}: a default, a defaultText or required`);
    }
  }
});

test('every command answers --help, -h and `tracepipe help CMD` with its usage, each option with its default, and its examples, exit 0', async () => {
  for (const [i, spec] of runnable.entries()) {
    const expected = commandHelp(spec);
    // --help on each; -h and `help CMD` (the same code path for all) on every other one, to spare a 2-core machine.
    for (const args of [[...words(spec), '--help'], i % 2 === 0 ? [...words(spec), '-h'] : ['help', ...words(spec)]]) {
      const r = await cli(...args);
      assert.equal(r.code, 0, `tracepipe ${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, expected, `tracepipe ${args.join(' ')}`);
      assert.equal(r.stderr, '');
    }
    assert.ok(expected.startsWith(`${usageText(spec)}\n`), `${spec.name}: the help starts with the usage`);
    const lines = expected.split('\n');
    for (const [name, o] of [...Object.entries(spec.options), ['help', { type: 'boolean', short: 'h', description: 'this help' }]]) {
      const line = lines.find((l) => new RegExp(`^ {2}(-\\w, )?--${name}( |$)`).test(l));
      assert.ok(line, `${spec.name}: --${name} has a line in the help`);
      if (name !== 'help') assert.ok(line.endsWith(`[${defaultText(o)}]`), `${spec.name} --${name} shows its default: ${line}`);
    }
    for (const e of spec.examples) assert.ok(expected.includes(`  ${exampleLine(spec, e.args)}\n      ${e.does}\n`), `${spec.name}: example ${e.args.join(' ')}`);
  }
});

test('every documented example parses by its command\'s declaration (without running it)', () => {
  for (const spec of runnable) {
    for (const e of spec.examples) assert.doesNotThrow(() => parseCommand(spec, e.args), `tracepipe ${spec.name} ${e.args.join(' ')}`);
  }
});

test('a command group lists its subcommands with an example each; `help GROUP` and `GROUP help SUB` work too', async () => {
  for (const group of COMMANDS.filter(isGroup)) {
    const r = await cli(group.name, '--help');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, groupHelp(group));
    for (const s of group.subcommands) assert.match(r.stdout, new RegExp(`^ {2}tracepipe ${s.name} `, 'm'));
    assert.equal((await cli('help', group.name)).stdout, groupHelp(group));
    const sub = group.subcommands[0];
    const viaGroup = await cli(group.name, 'help', words(sub).at(-1));
    assert.equal(viaGroup.code, 0);
    assert.equal(viaGroup.stdout, commandHelp(sub));
  }
  const main = await cli('--help');
  assert.equal(main.code, 0);
  for (const e of COMMANDS) assert.match(main.stdout, new RegExp(`^ {2}${e.name} +${e.summary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
  assert.equal((await cli('help')).stdout, main.stdout);
});

/** A usage error: exit 2, the one line, then the command's usage line(s); nothing else. */
async function assertUsageError(args, line, usage) {
  const r = await cli(...args);
  assert.equal(r.code, 2, `tracepipe ${args.join(' ')}: ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, `tracepipe: ${line}\n${usage}\n`, `tracepipe ${args.join(' ')}`);
}

test('an unknown option names the command and suggests the option meant', async () => {
  await assertUsageError(['dump', 'app.tptrace', '--fromat', 'jsonl'], 'unknown option --fromat for dump; did you mean --format?', 'usage: tracepipe dump FILE [options]');
  await assertUsageError(['report', 'app.tptrace', '--warnms', '20'], 'unknown option --warnms for report; did you mean --warn-ms?', 'usage: tracepipe report FILE [options]');
  await assertUsageError(['gcdump', 'report', 'a.gcdump', '--jsno'], 'unknown option --jsno for gcdump report; did you mean --json?', 'usage: tracepipe gcdump report FILE [options]');
  await assertUsageError(['convert', 'app.tptrace', '--to', 'perfetto', '--outptu', 'x'], 'unknown option --outptu for convert; did you mean --output?', 'usage: tracepipe convert FILE --to FORMAT [options]');
  // Nothing close: no guess.
  await assertUsageError(['stats', 'app.tptrace', '--colour'], 'unknown option --colour for stats', 'usage: tracepipe stats FILE [options]');
  await assertUsageError(['stats', 'app.tptrace', '-x'], 'unknown option -x for stats', 'usage: tracepipe stats FILE [options]');
});

test('a missing argument, a missing value, a value too many: one line and the usage', async () => {
  await assertUsageError(['convert', 'app.tptrace'], 'missing --to FORMAT for convert', 'usage: tracepipe convert FILE --to FORMAT [options]');
  await assertUsageError(['convert', 'app.tptrace', '--to'], 'option --to of convert needs a value (FORMAT)', 'usage: tracepipe convert FILE --to FORMAT [options]');
  await assertUsageError(['explain'], 'missing FILE for explain', 'usage: tracepipe explain FILE [options]');
  await assertUsageError(['gcdump', 'diff', 'a.gcdump'], 'missing B for gcdump diff', 'usage: tracepipe gcdump diff A B [options]');
  await assertUsageError(['gcdump', 'convert', 'a.gcdump'], 'missing --output OUT.heapsnapshot for gcdump convert', 'usage: tracepipe gcdump convert FILE -o OUT.heapsnapshot [options]');
  await assertUsageError(['stop', '--pid', '1'], 'missing --session ID for stop', 'usage: tracepipe stop --pid N --session ID');
  await assertUsageError(['ps', 'extra'], "too many arguments for ps: 'extra' (it takes none)", 'usage: tracepipe ps [options]');
  await assertUsageError(['report', 'app.tptrace', '--json=yes'], 'option --json of report takes no value', 'usage: tracepipe report FILE [options]');
  await assertUsageError(['recorder'], 'missing command for recorder', 'usage: tracepipe recorder dump ...');
  await assertUsageError(
    ['collect'],
    'collect needs --pid N, or -- CMD ARGS... to launch',
    'usage: tracepipe collect --pid N [options]\n       tracepipe collect [options] -- CMD ARGS...\n       tracepipe collect --list-profiles',
  );
});

test('a mistyped command gets the nearest name', async () => {
  const r = await cli('reprot', 'app.tptrace');
  assert.equal(r.code, 2);
  assert.equal(r.stderr, "tracepipe: unknown command 'reprot'; did you mean 'report'? ('tracepipe --help' lists them)\n");
  const sub = await cli('gcdump', 'colect');
  assert.equal(sub.stderr, "tracepipe: unknown gcdump command 'colect'; did you mean 'gcdump collect'? ('tracepipe gcdump --help' lists them)\n");
});

test('the suggestion: one edit per swap of neighbours, a third of the word at most, or the one name it starts', () => {
  assert.equal(editDistance('fromat', 'format'), 1);
  assert.equal(editDistance('warnms', 'warn-ms'), 1);
  assert.equal(editDistance('', 'abc'), 3);
  assert.equal(closestName('fromat', ['format', 'quiet']), 'format');
  assert.equal(closestName('colour', ['format', 'quiet', 'json']), undefined);
  assert.equal(closestName('sch', ['schema', 'format']), 'schema', 'the only name it starts');
  assert.equal(closestName('no', ['no-rundown', 'no-source-maps']), undefined, 'the start of two names is no guess');
  assert.equal(closestName('x', ['o', 'q']), 'o', 'one edit is always close enough');
});
