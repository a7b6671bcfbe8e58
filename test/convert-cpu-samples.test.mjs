// CPU samples in the exports, read back by tools nobody here wrote: the speedscope file against the
// JSON schema speedscope publishes (ajv), and the Perfetto file decoded by protoc with Perfetto's
// field numbers, and speedscope's own page importing the file in headless Chromium. The trace is
// written without a session (helpers/cpu-sample-trace.mjs), so every
// sample's thread, time and stack is known; the numbers must be those of src/analysis/cpu-profile.ts.
// Then the same on a real traced process that spends its time in one function.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { execFile, execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Ajv from 'ajv';
import { readTrace } from '../dist/index.js';
import { CpuProfileBuilder, frameName, functionTimes } from '../dist/analysis/cpu-profile.js';
import { assertOneLine, cli, needTool, run } from './helpers/convert-helpers.mjs';
import { compileTs } from './helpers/compiled-scripts.mjs';
import { CpuSampleScript, FRAMES, twoThreadScript } from './helpers/cpu-sample-trace.mjs';
import { parseProtoText } from './helpers/reader-text.mjs';
import { headerInfo } from './helpers/synthetic-trace.mjs';
import { tempDir } from './helpers/temp-dir.mjs';
import { writeTrace } from './helpers/trace-builder.mjs';

const execFileAsync = promisify(execFile);
const HOT = fileURLToPath(new URL('./fixtures/cpu-hot.mjs', import.meta.url));
const REGISTER = new URL('../dist/register.js', import.meta.url).href;
const SPEEDSCOPE_SCHEMA = createRequire(import.meta.url).resolve('speedscope/dist/release/file-format-schema.json');
const SPEEDSCOPE_APP = dirname(SPEEDSCOPE_SCHEMA);
const PERFETTO_SCHEMA_DIR = fileURLToPath(new URL('./fixtures/', import.meta.url));

let dir;
let trace;
let profile;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tracepipe-cpu-samples-'));
  trace = join(dir, 'samples.tptrace');
  await twoThreadScript().write(trace);
  const builder = new CpuProfileBuilder();
  for await (const batch of readTrace(trace).batches({ order: 'stream' })) for (const e of batch.events) builder.add(e);
  profile = builder.finishForViews();
});
after(() => rm(dir, { recursive: true, force: true }));

async function speedscope(input = trace) {
  const out = join(dir, `out-${Math.random().toString(36).slice(2)}.json`);
  const r = await cli(['convert', input, '--to', 'speedscope', '-o', out]);
  assert.equal(r.code, 0, r.stderr);
  return { file: JSON.parse(await readFile(out, 'utf8')), stdout: r.stdout };
}

/** Self time per frame (by name, file, line and column) over a speedscope profile's samples, and their sum. */
function selfTimes(file, p) {
  const self = new Map();
  let total = 0;
  p.samples.forEach((stack, i) => {
    total += p.weights[i];
    // A sample of no frame counts in the total, on no function.
    if (stack.length === 0) return;
    const f = file.shared.frames[stack[stack.length - 1]];
    const key = `${f.name}|${f.file ?? ''}|${f.line ?? 0}|${f.col ?? 0}`;
    self.set(key, (self.get(key) ?? 0) + p.weights[i]);
  });
  return { self, total };
}

async function validSpeedscope(file) {
  const ajv = new Ajv({ allErrors: true });
  const validate = ajv.compile(JSON.parse(await readFile(SPEEDSCOPE_SCHEMA, 'utf8')));
  assert.ok(validate(file), ajv.errorsText(validate.errors));
}

const frameKey = (f) => `${frameName(f)}|${f.url}|${f.line}|${f.column}`;

test('speedscope: valid against the schema speedscope publishes; one sampled profile per sampled thread, named as the timelines name them; frames carry file, line and column', async () => {
  const { file, stdout } = await speedscope();
  await validSpeedscope(file);
  assert.deepEqual(file.profiles.map((p) => [p.type, p.name, p.unit]), [['sampled', 'main', 'nanoseconds'], ['sampled', 'pool (worker 1)', 'nanoseconds']]);
  // The watchdog wrote some of main's samples with ids of its own: they are main's, on the same frames.
  const main = file.profiles[0];
  assert.equal(main.samples.length, profile.threads.get(0).timestampNs.length);
  assert.equal(main.samples.length, 42);
  assert.equal(main.startValue, 1_000_000);
  assert.equal(main.endValue, 41_000_000);
  assert.equal(file.activeProfileIndex, 0, 'main was sampled the longest');
  // In time order, though the watchdog's samples come last in the stream; each stands for the 1 ms to the next.
  const leaf = (stack) => (stack.length === 0 ? 'no frame' : file.shared.frames[stack[stack.length - 1]].name);
  const cycle = ['hot', 'hot', 'helper', '(anonymous)', '(garbage collector)', 'hot', '(program)'];
  const want = Array.from({ length: 40 }, (_, i) => cycle[i % cycle.length]);
  want.splice(34, 0, '(unresolved stack)');
  want.splice(38, 0, 'no frame');
  assert.deepEqual(main.samples.map(leaf), want);
  assert.deepEqual(main.weights.filter((w) => w !== 1_000_000), [500_000, 500_000, 500_000, 500_000]);
  const frames = new Map(file.shared.frames.map((f) => [f.name, f]));
  assert.equal(file.shared.frames.length, new Set(file.shared.frames.map((f) => JSON.stringify(f))).size, 'each frame once');
  assert.deepEqual(frames.get('hot'), { name: 'hot', file: FRAMES.hot[1], line: 10, col: 3 });
  assert.deepEqual(frames.get('(anonymous)'), { name: '(anonymous)', file: FRAMES.anonymous[1], line: 30, col: 12 });
  assert.deepEqual(frames.get('(garbage collector)'), { name: '(garbage collector)' });
  // Stacks are the outermost first: main → hot → helper.
  const helper = file.shared.frames.indexOf(frames.get('helper'));
  const withHelper = main.samples.find((s) => s.includes(helper));
  assert.deepEqual(withHelper.map((i) => file.shared.frames[i].name), ['main', 'hot', 'helper']);
  // A sample whose stack was never defined stands on a frame of its own, and the summary says so.
  assert.equal(main.samples.filter((s) => s.length === 1 && file.shared.frames[s[0]].name === '(unresolved stack)').length, 1);
  assert.match(stdout, /note: 1 sample whose stack the trace does not define .* shown as "\(unresolved stack\)"/);
  assert.match(stdout, /note: the sampler lost 3 samples before writing them \(buffer-full: 3\)/);
});

test('speedscope: every function\'s self-time share is the share functionTimes gives, per thread and over all threads', async () => {
  const { file } = await speedscope();
  const threads = [...profile.threads.values()].sort((a, b) => a.thread - b.thread);
  const check = (profiles, sampled) => {
    const want = functionTimes(profile, sampled);
    const got = { self: new Map(), total: 0 };
    for (const p of profiles) {
      const s = selfTimes(file, p);
      got.total += s.total;
      for (const [k, v] of s.self) got.self.set(k, (got.self.get(k) ?? 0) + v);
    }
    assert.equal(got.total, want.sampledNs);
    for (const f of want.functions) {
      const key = frameKey(profile.frames[f.frame]);
      assert.ok(Math.abs((got.self.get(key) ?? 0) / got.total - f.selfNs / want.sampledNs) < 1e-12, key);
    }
    return { want, got };
  };
  const { want } = check([file.profiles[0]], [threads[0]]);
  assert.equal(frameName(profile.frames[want.functions[0].frame]), 'hot', 'hot tops main\'s self time');
  check([file.profiles[1]], [threads[1]]);
  check(file.profiles, threads);
  // The worker's gap of 10 ms counts as four intervals, as in every view.
  assert.equal(Math.max(...file.profiles[1].weights), 4_000_000);
});

test('speedscope: speedscope\'s own page (its release build, in headless Chromium) imports the file and shows main\'s profile, without an error', { timeout: 120_000 }, async (t) => {
  let executablePath;
  try {
    executablePath = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  } catch {
    if (process.env.CI === 'true') throw new Error('chromium is not installed; CI must install it (.ci/run)');
    return t.skip('chromium is not installed (Debian package chromium)');
  }
  const out = join(dir, 'page.speedscope.json');
  assert.equal((await cli(['convert', trace, '--to', 'speedscope', '-o', out])).code, 0);
  // speedscope loads a profile from `#profileURL=`, with fetch: so the page and the file are served.
  const server = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://localhost').pathname;
    try {
      const body = await readFile(path === '/profile.json' ? out : join(SPEEDSCOPE_APP, path.slice(1)));
      const type = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json' }[path.slice(path.lastIndexOf('.'))];
      res.writeHead(200, type ? { 'content-type': type } : {});
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [], timeout: 60_000 });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`http://127.0.0.1:${server.address().port}/index.html#profileURL=/profile.json`, { timeout: 60_000 });
    // speedscope names the tab after the file's profile group once it has imported it.
    await page.waitForFunction(() => document.title.endsWith(' - speedscope'), null, { timeout: 60_000 }).catch((e) => {
      throw new Error(`speedscope did not import the file (${e.message}); its errors: ${errors.join(' | ') || 'none'}`);
    });
    assert.equal(await page.title(), 'synthetic.mjs - speedscope');
    assert.match(await page.evaluate(() => document.body.innerText), /main \(1\/2\)/);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});

test('speedscope: to stdout with -o -, the summary on stderr', async () => {
  const r = await cli(['convert', trace, '--to', 'speedscope', '-o', '-']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).profiles.length, 2);
  assert.match(r.stderr, /converted \d+ events .* \(speedscope, /);
});

test('speedscope: a trace without CPU samples is refused in one line, and no file is made', async (t) => {
  const empty = await tempDir(t);
  const input = join(empty, 'no-samples.tptrace');
  const type = { provider: 'App', name: 'Tick', id: 1, version: 0, level: 4, keywords: 0n, fields: [['n', 'u32']] };
  await writeTrace(input, [type], [{ type, threadId: 0, sequence: 0, timestampNs: 1000, values: [1] }], { header: headerInfo() });
  const r = await cli(['convert', input, '--to', 'speedscope']);
  assertOneLine(r, 1, /^tracepipe: the trace has no CPU samples \(no Runtime\.CpuSampler\/Sample events\)/);
  assert.deepEqual(await readdir(empty), ['no-samples.tptrace']);
});

/**
 * `convert --to perfetto` of `input`, decoded by protoc: the packets, and each PerfSample with its
 * time (trace ns), thread and callstack resolved through the interned data (the outermost frame first).
 * Checks on the way that every interned entry is defined once, before its first use.
 */
async function perfettoSamples(input, out) {
  const r = await cli(['convert', input, '--to', 'perfetto', '-o', out]);
  assert.equal(r.code, 0, r.stderr);
  const decoded = await run('sh', ['-c', `protoc --decode=perfetto.protos.Trace --proto_path='${PERFETTO_SCHEMA_DIR}' '${join(PERFETTO_SCHEMA_DIR, 'perfetto-trace.proto')}' < '${out}'`]);
  assert.equal(decoded.code, 0, decoded.stderr);
  assert.doesNotMatch(decoded.stdout, /^\s*\d+:/m, 'no field the schema does not know');
  const packets = parseProtoText(decoded.stdout).packet;
  const base = Number(packets[0].clock_snapshot.clocks[0].timestamp);
  const functionNames = new Map();
  const sourcePaths = new Map();
  const frames = new Map();
  const callstacks = new Map();
  const define = (map, iid, value) => {
    assert.ok(!map.has(iid), `iid ${iid} defined once`);
    map.set(iid, value);
  };
  const samples = [];
  const threadNames = new Map();
  for (const p of packets) {
    const i = p.interned_data ?? {};
    for (const s of i.function_names ?? []) define(functionNames, s.iid, s.str);
    for (const s of i.source_paths ?? []) define(sourcePaths, s.iid, s.str);
    for (const f of i.frames ?? []) define(frames, f.iid, { name: functionNames.get(f.function_name_id), file: sourcePaths.get(f.source_path_iid), line: f.line_number });
    for (const c of i.callstacks ?? []) define(callstacks, c.iid, c.frame_ids.map((id) => frames.get(id)));
    const thread = p.track_descriptor?.thread;
    if (thread) threadNames.set(thread.tid, thread.thread_name);
    if (!p.perf_sample) continue;
    assert.equal(p.sequence_flags, 2, 'a sample needs the sequence\'s interned state');
    // A sample of no frame has no callstack.
    const iid = p.perf_sample.callstack_iid;
    const stack = iid === undefined ? [] : callstacks.get(iid);
    assert.ok(stack, `callstack ${iid} is defined before its first sample`);
    assert.ok(threadNames.has(p.perf_sample.tid), 'the thread\'s track is described before its samples');
    samples.push({ ts: p.timestamp - base, pid: p.perf_sample.pid, tid: p.perf_sample.tid, stack });
  }
  return { packets, samples, threadNames, stdout: r.stdout };
}

test('perfetto: samples are PerfSample packets under their thread, with interned callstacks whose frames name the functions (protoc)', async (t) => {
  if (!needTool(t, 'protoc', 'protobuf-compiler')) return;
  const { packets, samples, threadNames } = await perfettoSamples(trace, join(dir, 'samples.pftrace'));
  const { pid } = headerInfo();
  assert.ok(samples.every((s) => s.pid === pid));
  // Every sample, on its thread, at its own time on the trace clock.
  for (const [thread, tid, name] of [[0, pid, 'main'], [1, pid + 1, 'pool (worker 1)']]) {
    assert.equal(threadNames.get(tid), name);
    const got = samples.filter((s) => s.tid === tid).map((s) => s.ts).sort((a, b) => a - b);
    assert.deepEqual(got, [...profile.threads.get(thread).timestampNs]);
  }
  // hot (main.js:10) is in main's callstacks, called from main, as many times as it was sampled.
  const mainSamples = samples.filter((s) => s.tid === pid).sort((a, b) => a.ts - b.ts);
  const hot = mainSamples.filter((s) => s.stack.some((f) => f.name === 'hot'));
  const withHot = [0, 1, 2, 5]; // the places of hot in the script's cycle of seven stacks
  assert.deepEqual(hot.map((s) => s.ts), Array.from({ length: 40 }, (_, i) => i).filter((i) => withHot.includes(i % 7)).map((i) => 1_000_000 * (i + 1)));
  assert.deepEqual(hot[0].stack.slice(0, 2), [{ name: 'main', file: FRAMES.main[1], line: 1 }, { name: 'hot', file: FRAMES.hot[1], line: 10 }]);
  assert.ok(!samples.filter((s) => s.tid === pid + 1).some((s) => s.stack.some((f) => f.name === 'hot')), 'hot is main\'s only');
  assert.deepEqual(mainSamples.filter((s) => s.stack.length === 0 || s.stack[0].name === '(unresolved stack)').map((s) => [s.ts, s.stack[0]?.name]), [[34_500_000, '(unresolved stack)'], [37_500_000, undefined]]);
  assert.deepEqual(mainSamples.find((s) => s.stack.some((f) => f.name === '(anonymous)')).stack.map((f) => f.name), ['main', '(anonymous)']);
  // The sampler's definitions and samples are not instants any more; its other events still are.
  const names = new Map(packets.flatMap((p) => p.interned_data?.event_names ?? []).map((n) => [n.iid, n.name]));
  const instants = packets.filter((p) => p.track_event?.type === 'TYPE_INSTANT').map((p) => names.get(p.track_event.name_iid));
  assert.ok(!instants.some((n) => /CpuSampler\/(Frame|Stack|Sample)$/.test(n)), instants.join());
  assert.ok(instants.includes('Runtime.CpuSampler/SamplesLost'));
});

/** Where V8 places a function: the '(' of its parameters after `name` (line and column 1-based). */
function positionOf(text, name) {
  const lines = text.split('\n');
  const line = lines.findIndex((l) => l.includes(`function ${name}(`));
  return { line: line + 1, column: lines[line].indexOf(`${name}(`) + name.length + 1 };
}

test('speedscope and Perfetto show a compiled script\'s frames at their original location (source maps), and say so', async (t) => {
  if (!needTool(t, 'protoc', 'protobuf-compiler')) return;
  const own = await tempDir(t);
  const source = `// Compiled to JavaScript with a map.\ninterface Options {\n  readonly n: number;\n  readonly label: string;\n  readonly tags: readonly string[];\n}\n\ntype Step = (x: number) => number;\n\nexport function hotSpot(options: Options): number {\n  let x = 0;\n  for (let i = 0; i < options.n; i++) x += i;\n  return x;\n}\n`;
  const { ts, script } = compileTs(own, 'hot.ts', source);
  const generated = positionOf(readFileSync(script, 'utf8'), 'hotSpot');
  const original = positionOf(source, 'hotSpot');
  assert.notEqual(generated.line, original.line, 'the emitted script puts hotSpot on another line');
  const s = new CpuSampleScript();
  for (let i = 0; i < 10; i++) s.sample(0, 0, 1_000_000 * (i + 1), [['hotSpot', pathToFileURL(script).href, generated.line, generated.column]]);
  const input = join(own, 'mapped.tptrace');
  await s.write(input);
  const out = join(own, 'mapped.json');
  const r = await cli(['convert', input, '--to', 'speedscope', '-o', out]);
  assert.equal(r.code, 0, r.stderr);
  const file = JSON.parse(await readFile(out, 'utf8'));
  assert.deepEqual(file.shared.frames, [{ name: 'hotSpot', file: pathToFileURL(ts).href, line: original.line, col: original.column }]);
  assert.match(r.stdout, /note: 1 frame of 1 script shown at their original location through source maps/);
  const { samples, stdout } = await perfettoSamples(input, join(own, 'mapped.pftrace'));
  assert.match(stdout, /note: 1 frame of 1 script shown at their original location through source maps/);
  assert.equal(samples.length, 10);
  assert.deepEqual(samples[0].stack, [{ name: 'hotSpot', file: pathToFileURL(ts).href, line: original.line }]);
});

let hotTrace;
/** A real traced process that spends a second in hotLoop without yielding (fixtures/cpu-hot.mjs), traced once. */
function hotTraced() {
  hotTrace ??= (async () => {
    const input = join(dir, 'hot.tptrace');
    const env = { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: 'Runtime.CpuSampler', TRACEPIPE_OUTPUT: input };
    await execFileAsync(process.execPath, [`--import=${REGISTER}`, HOT, 'spin', '1000'], { env, timeout: 60_000 });
    const builder = new CpuProfileBuilder();
    for await (const batch of readTrace(input).batches({ order: 'stream' })) for (const e of batch.events) builder.add(e);
    return { input, profile: builder.finishForViews() };
  })();
  return hotTrace;
}

test('a real traced process that spends a second in hotLoop without yielding: hotLoop tops the self-time list of the speedscope file, with the share report computes', { timeout: 120_000 }, async (t) => {
  const { input, profile: real } = await hotTraced();
  const { file } = await speedscope(input);
  await validSpeedscope(file);
  assert.deepEqual(file.profiles.map((p) => p.name), ['main'], 'tracepipe\'s own threads are not sampled');
  const { self, total } = selfTimes(file, file.profiles[0]);
  const ranked = [...self].sort((a, b) => b[1] - a[1]);
  t.diagnostic(`speedscope self time: ${ranked.slice(0, 3).map(([k, ns]) => `${k.split('|')[0]} ${((100 * ns) / total).toFixed(1)} %`).join(', ')}`);
  const [top, ns] = ranked[0];
  assert.match(top, /^hotLoop\|file:\/\/.*\/cpu-hot\.mjs\|\d+\|\d+$/);
  assert.ok(ns / total > 0.5, `hotLoop has most of the time: ${((100 * ns) / total).toFixed(1)} %`);
  const want = functionTimes(real);
  assert.equal(frameKey(real.frames[want.functions[0].frame]), top);
  assert.ok(Math.abs(ns / total - want.functions[0].selfNs / want.sampledNs) < 1e-12);
});

test('the same process in Perfetto: hotLoop is the innermost frame of most of the main thread\'s samples, with its script and line (protoc)', { timeout: 120_000 }, async (t) => {
  if (!needTool(t, 'protoc', 'protobuf-compiler')) return;
  const { input, profile: real } = await hotTraced();
  const { samples } = await perfettoSamples(input, join(dir, 'hot.pftrace'));
  const { pid } = (await readTrace(input).summary()).header;
  const onMain = samples.filter((s) => s.tid === pid);
  assert.equal(onMain.length, samples.length, 'only the main thread is sampled');
  assert.equal(onMain.length, real.threads.get(0).timestampNs.length);
  const inHot = onMain.filter((s) => s.stack.at(-1)?.name === 'hotLoop');
  assert.ok(inHot.length / onMain.length > 0.5, `${inHot.length} of ${onMain.length} samples in hotLoop`);
  assert.match(inHot[0].stack.at(-1).file, /\/cpu-hot\.mjs$/);
  assert.ok(inHot[0].stack.at(-1).line > 0);
  assert.ok(inHot[0].stack.length >= 2, 'called from the fixture\'s loop');
});
