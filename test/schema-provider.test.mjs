// defineProvider: validation, the enabled rule, isEnabled, and enablement that follows sessions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import fc from 'fast-check';
import { defineProvider, Level, readTrace, startSession } from '../dist/index.js';
import { eventEnabledFor } from '../dist/schema/provider.js';
import { tempDir } from './helpers/temp-dir.mjs';

const throwsTypeOrError = (fn, pattern) => assert.throws(fn, (e) => e instanceof Error && pattern.test(e.message) && e.message.startsWith('tracepipe: '));

test('a duplicate provider name fails at definition, naming the provider', () => {
  defineProvider('Dup.Name', { events: {} });
  throwsTypeOrError(() => defineProvider('Dup.Name', { events: {} }), /provider named 'Dup\.Name' is already defined/);
});

test('a duplicate event id fails at definition, naming both events, and registers nothing', () => {
  const def = { events: { First: { id: 7 }, Second: { id: 7 } } };
  throwsTypeOrError(() => defineProvider('Dup.Id', def), /event id 7 is used by both 'First' and 'Second' in provider 'Dup\.Id'/);
  // The failed definition left no provider behind.
  const p = defineProvider('Dup.Id', { events: { First: { id: 7 } } });
  assert.equal(p.First.id, 7);
});

test('bad definitions fail with a clear message', () => {
  const cases = [
    [() => defineProvider('Bad.Field', { events: { E: { id: 1, fields: [['x', 'u128']] } } }), /bad field \["x","u128"\]; expected \[name, type\]/],
    [() => defineProvider('Bad.Field2', { events: { E: { id: 1, fields: ['x'] } } }), /bad field/],
    [() => defineProvider('Bad.FieldTwice', { events: { E: { id: 1, fields: [['x', 'u8'], ['x', 'u16']] } } }), /declares field 'x' twice/],
    [() => defineProvider('', { events: {} }), /provider name "" must start with a letter/],
    [() => defineProvider('1abc', { events: {} }), /provider name "1abc"/],
    [() => defineProvider('Bad.Kw', { keywords: { a: 1 }, events: {} }), /keyword 'a' of 'Bad\.Kw' must be a 64-bit bigint mask/],
    [() => defineProvider('Bad.Kw2', { keywords: { a: 1n << 64n }, events: {} }), /keyword 'a'/],
    [() => defineProvider('Bad.UnknownKw', { keywords: { a: 1n }, events: { E: { id: 1, keywords: ['b'] } } }), /has no keyword 'b'/],
    [() => defineProvider('Bad.Level', { events: { E: { id: 1, level: 6 } } }), /invalid level 6/],
    [() => defineProvider('Bad.Id', { events: { E: { id: 70000 } } }), /needs an integer id in 0\.\.65535/],
    [() => defineProvider('Bad.Id2', { events: { E: { id: 1.5 } } }), /needs an integer id/],
    [() => defineProvider('Bad.Reserved', { events: { isEnabled: { id: 1 } } }), /clashes with a provider member/],
  ];
  for (const [fn, pattern] of cases) throwsTypeOrError(fn, pattern);
});

test('the enabled rule: provider listed, keywords 0 or overlapping, level LogAlways or ≤ the session level', () => {
  const keywords = fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.constantFrom(1n, 2n, 3n, 2n ** 63n));
  const level = fc.integer({ min: 0, max: 5 });
  fc.assert(
    fc.property(keywords, level, keywords, level, (evKw, evLevel, onKw, onLevel) => {
      const kwOk = evKw === 0n || (evKw & onKw) !== 0n;
      const levelOk = evLevel === Level.LogAlways || evLevel <= onLevel;
      assert.equal(eventEnabledFor({ keywords: evKw, level: evLevel }, { keywords: onKw, level: onLevel }), kwOk && levelOk);
    }),
    { numRuns: 1000 },
  );
});

const ruleProvider = defineProvider('Rule.App', {
  keywords: { a: 0x1n, b: 0x2n, high: 1n << 63n },
  events: {
    NoKw: { id: 1, level: Level.Informational },
    KwA: { id: 2, level: Level.Informational, keywords: ['a'] },
    KwB: { id: 3, level: Level.Informational, keywords: ['b'] },
    KwHigh: { id: 4, level: Level.Warning, keywords: ['high'] },
    Verbose: { id: 5, level: Level.Verbose, keywords: ['a'] },
    Always: { id: 6, level: Level.LogAlways, keywords: ['a'] },
    AlwaysB: { id: 7, level: Level.LogAlways, keywords: ['b'] },
  },
});
const enabledNames = () => ruleProvider.events.filter((e) => e.enabled).map((e) => e.name);

test('with no session nothing is enabled, and enabled is a plain boolean data property', () => {
  for (const ev of ruleProvider.events) {
    const d = Object.getOwnPropertyDescriptor(ev, 'enabled');
    assert.ok(d && 'value' in d, `${ev.name}.enabled is a data property`);
    assert.equal(ev.enabled, false);
  }
  assert.equal(ruleProvider.isEnabled(), false);
  assert.equal(ruleProvider.isEnabled(Level.LogAlways, ['a']), false);
});

test('sessions enable exactly the events the rule selects, and stopping disables them', async (t) => {
  const dir = await tempDir(t);
  const table = [
    ['Rule.App:0x1:4', ['NoKw', 'KwA', 'Always']],
    ['Rule.App:0x2:3', ['AlwaysB']],
    ['Rule.App:0x8000000000000000:3', ['KwHigh']],
    ['Rule.App:0x3:0', ['Always', 'AlwaysB']],
    ['Rule.App', ['NoKw', 'KwA', 'KwB', 'KwHigh', 'Verbose', 'Always', 'AlwaysB']],
    ['Other.Provider', []],
  ];
  for (const [spec, want] of table) {
    const s = await startSession({ providers: spec, output: join(dir, 'rule.tptrace'), bufferSizeMB: 1 });
    assert.deepEqual(enabledNames(), want, spec);
    await s.stop();
    assert.deepEqual(enabledNames(), [], `after stopping ${spec}`);
  }
});

test('two sessions enable the union of what each selects', async (t) => {
  const dir = await tempDir(t);
  const s1 = await startSession({ providers: 'Rule.App:0x1:4', output: join(dir, 'a.tptrace'), bufferSizeMB: 1 });
  const s2 = await startSession({ providers: [{ name: 'Rule.App', keywords: 0x2n, level: Level.Warning }], output: join(dir, 'b.tptrace'), bufferSizeMB: 1 });
  assert.deepEqual(enabledNames(), ['NoKw', 'KwA', 'Always', 'AlwaysB']);
  await s1.stop();
  assert.deepEqual(enabledNames(), ['AlwaysB']);
  await s2.stop();
  assert.deepEqual(enabledNames(), []);
});

test('isEnabled(level?, keywordNames?) answers for a hypothetical event', async (t) => {
  const dir = await tempDir(t);
  const s = await startSession({ providers: 'Rule.App:0x1:3', output: join(dir, 'is.tptrace'), bufferSizeMB: 1 });
  t.after(() => s.stop());
  assert.equal(ruleProvider.isEnabled(), true, 'LogAlways with no keywords');
  assert.equal(ruleProvider.isEnabled(Level.Warning, ['a']), true);
  assert.equal(ruleProvider.isEnabled(Level.Informational, ['a']), false, 'level 4 > session level 3');
  assert.equal(ruleProvider.isEnabled(Level.Warning, ['b']), false, 'keyword b is not in 0x1');
  assert.equal(ruleProvider.isEnabled(Level.Critical, ['a', 'b']), true, 'any overlap is enough');
  assert.throws(() => ruleProvider.isEnabled(Level.Warning, ['nope']), /provider 'Rule\.App' has no keyword 'nope'/);
});

test('a provider defined after a session that names it started is enabled at once, and its events are recorded', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'late.tptrace');
  const s = await startSession({ providers: 'Late.App:0x1:4', output: file, bufferSizeMB: 1 });
  const late = defineProvider('Late.App', {
    keywords: { a: 1n, b: 2n },
    events: { On: { id: 1, keywords: ['a'], fields: [['n', 'u32']] }, Off: { id: 2, keywords: ['b'] } },
  });
  assert.equal(late.On.enabled, true);
  assert.equal(late.Off.enabled, false);
  assert.equal(late.isEnabled(Level.Informational, ['a']), true);
  late.On.write(42);
  const result = await s.stop();
  assert.equal(late.On.enabled, false);
  assert.equal(result.eventsWritten, 1);
  const events = [];
  for await (const e of readTrace(file)) events.push(e);
  assert.deepEqual(events.map((e) => [e.provider, e.name, e.fields]), [['Late.App', 'On', { n: 42 }]]);
});

test('a provider whose onEnable, onDisable or onFlush throws anything (null, undefined, an object with no string form) gets a warning; the session records and stops', async (t) => {
  const warnings = [];
  const onWarning = (w) => warnings.push(w.message);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const unprintable = Object.create(null);
  const p = defineProvider('Test.ThrowsAnything', {
    events: { E: { id: 1, fields: [['i', 'u32']] } },
    onEnable() {
      throw null;
    },
    onDisable() {
      throw unprintable;
    },
    onFlush() {
      throw undefined;
    },
  });
  const file = join(await tempDir(t), 'throws.tptrace');
  const session = await startSession({ providers: 'Test.ThrowsAnything', output: file });
  p.E.write(7);
  const result = await session.stop();
  assert.equal(result.eventsWritten, 1);
  const events = [];
  for await (const e of readTrace(file)) events.push(e.fields.i);
  assert.deepEqual(events, [7]);
  await new Promise((resolve) => setImmediate(resolve));
  const mine = warnings.filter((w) => w.includes("'Test.ThrowsAnything' threw"));
  assert.ok(mine.some((w) => w.startsWith('tracepipe: onEnable') && w.endsWith('threw: null')), mine.join(' | '));
  assert.ok(mine.some((w) => w.startsWith('tracepipe: onDisable') && w.endsWith('threw: [object Object]')), mine.join(' | '));
  assert.ok(mine.some((w) => w.startsWith('tracepipe: onFlush') && w.endsWith('threw: undefined')), mine.join(' | '));
});
