import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, startCli, startTarget, useTmpdir, waitFor } from './helpers/ipc-processes.mjs';
import { RUNTIME_COUNTERS } from '../dist/index.js';

const TARGET = fileURLToPath(new URL('./fixtures/counters-target.mjs', import.meta.url));
let dir;
before(async () => {
  dir = await useTmpdir((fn) => process.on('exit', fn));
});

const target = (t, env = {}) => startTarget(t, dir, { script: TARGET, args: [], env });

/** Map.groupBy, which Node 20 lacks. */
function groupBy(items, key) {
  const out = new Map();
  for (const item of items) {
    const k = key(item);
    if (!out.has(k)) out.set(k, []);
    out.get(k).push(item);
  }
  return out;
}

function parseCsv(text) {
  const lines = text.split('\n');
  assert.equal(lines.at(-1), '', 'the file ends with a whole line');
  assert.equal(lines[0], 'time,provider,name,value,unit');
  return lines.slice(1, -1).map((l) => {
    const [time, provider, name, value, unit] = l.split(',');
    return { time, provider, name, value: Number(value), unit };
  });
}

function parseJson(text) {
  assert.ok(text.endsWith('\n'), 'the file ends with a whole line');
  return text.trim().split('\n').map((l) => JSON.parse(l));
}

/** Rows by interval (their time); each interval has every Runtime.Counters counter once, and the application's. */
function checkIntervals(rows, minIntervals) {
  const byTime = groupBy(rows, (r) => r.time);
  assert.ok(byTime.size >= minIntervals, `${byTime.size} intervals, wanted ${minIntervals}`);
  for (const [time, group] of byTime) {
    assert.ok(!Number.isNaN(Date.parse(time)), `time ${time}`);
    for (const c of RUNTIME_COUNTERS) {
      const r = group.filter((g) => g.provider === 'Runtime.Counters' && g.name === c.name);
      assert.equal(r.length, 1, `${c.name} once at ${time}`);
      assert.equal(r[0].unit, c.unit);
      assert.ok(Number.isFinite(r[0].value));
    }
  }
  assert.ok(rows.some((r) => r.provider === 'Demo.App' && r.name === 'Inflight' && r.unit === 'requests'), 'the application counter');
  return byTime;
}

async function sessionsOf(pid) {
  const { stdout } = await startCli({ after() {} }, dir, ['ps']).done;
  const line = stdout.split('\n').find((l) => l.startsWith(`${pid} `));
  assert.ok(line, `tracepipe ps lists ${pid}:\n${stdout}`);
  return Number(line.split(/\s+/)[2]);
}

test('counters collect: csv and JSON lines, one row per counter per interval, ended by --duration', { timeout: 60_000 }, async (t) => {
  const tg = await target(t);
  for (const format of ['csv', 'json']) {
    const file = join(dir, `c.${format}`);
    const r = await startCli(t, dir, ['counters', 'collect', '--pid', String(tg.pid), '--counters', 'Runtime.Counters,Demo.App', '--format', format, '-o', file, '--duration', '3s', '--refresh', '500ms']).done;
    assert.equal(r.code, 0, r.stderr);
    const text = await readFile(file, 'utf8');
    const rows = format === 'csv' ? parseCsv(text) : parseJson(text);
    if (format === 'json') for (const row of rows) assert.deepEqual(Object.keys(row), ['time', 'provider', 'name', 'value', 'unit']);
    const byTime = checkIntervals(rows, 4);
    const heap = [...byTime.values()].map((g) => g.find((r) => r.name === 'HeapUsed').value);
    assert.ok(heap.every((v) => v > 1e6), 'heap used in bytes');
  }
  assert.equal(await sessionsOf(tg.pid), 0, 'no session left in the target');
});

test('counters collect: the file is complete after Ctrl-C, and after the target exits mid-way', { timeout: 60_000 }, async (t) => {
  const tg = await target(t);
  const file = join(dir, 'int.json');
  const cli = startCli(t, dir, ['counters', 'collect', '--pid', String(tg.pid), '--counters', 'Runtime.Counters,Demo.App', '--format', 'json', '-o', file, '--refresh', '300ms']);
  await waitFor('two intervals in the file', async () => (await readFile(file, 'utf8').catch(() => '')).split('"IntervalMs"').length > 2);
  cli.child.kill('SIGINT');
  const r = await cli.done;
  assert.equal(r.code, 0, r.stderr);
  checkIntervals(parseJson(await readFile(file, 'utf8')), 2);
  assert.equal(await sessionsOf(tg.pid), 0);

  const short = await target(t, { LIFE_MS: '6000' });
  const file2 = join(dir, 'exit.csv');
  const r2 = await startCli(t, dir, ['counters', 'collect', '--pid', String(short.pid), '--counters', 'Runtime.Counters,Demo.App', '-o', file2, '--refresh', '300ms']).done;
  assert.equal(r2.code, 0, r2.stderr);
  assert.match(r2.stderr, /the session ended in process/);
  checkIntervals(parseCsv(await readFile(file2, 'utf8')), 3);
});

test('counters collect -- CMD and monitor -- CMD: launch the command and follow it until it exits', { timeout: 60_000 }, async (t) => {
  const file = join(dir, 'launched.csv');
  const r = await startCli(t, dir, ['counters', 'collect', '--counters', 'Runtime.Counters,Demo.App', '-o', file, '--refresh', '300ms', '--', process.execPath, TARGET], { env: { LIFE_MS: '4000' } }).done;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^ready$/m, "the command's own output");
  checkIntervals(parseCsv(await readFile(file, 'utf8')), 3);
  // The monitor launches the same way, and ends with the command's exit status.
  const m = await startCli(t, dir, ['counters', 'monitor', '--refresh', '300ms', '--', process.execPath, TARGET], { env: { LIFE_MS: '4000' } }).done;
  assert.equal(m.code, 0, m.stderr);
  assert.match(m.stdout, /^ready$/m);
  assert.match(m.stdout, / Runtime\.Counters HeapUsed [\d.]+ MiB$/m);
  assert.match(m.stderr, /the session in process \d+ ended/);
});

test('counters list: the catalog, and a live process’s application counters', { timeout: 30_000 }, async (t) => {
  const plain = await startCli(t, dir, ['counters', 'list']).done;
  assert.equal(plain.code, 0);
  assert.match(plain.stdout, /^ {2}CpuUser +percent +gauge +CPU time/m);
  assert.match(plain.stdout, /^ {2}GcCount +collections +interval /m);
  const tg = await target(t);
  const live = await startCli(t, dir, ['counters', 'list', '--pid', String(tg.pid)]).done;
  assert.equal(live.code, 0, live.stderr);
  assert.match(live.stdout, /^Demo\.App\n {2}Inflight +requests +gauge +requests in progress$/m);
  assert.match(live.stdout, /^ {2}HeapUsed +bytes +gauge /m);
  assert.equal(await sessionsOf(tg.pid), 0);
  const bad = await startCli(t, dir, ['counters', 'collect', '--pid', String(tg.pid), '--format', 'xml']).done;
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^tracepipe: --format must be csv or json, not 'xml'\n$/);
});

test('counters monitor without a terminal: plain timestamped lines; Ctrl-C stops the target’s session', { timeout: 60_000 }, async (t) => {
  const tg = await target(t);
  const cli = startCli(t, dir, ['counters', 'monitor', '--pid', String(tg.pid), '--counters', 'Runtime.Counters,Demo.App']);
  await waitFor('two intervals printed', () => cli.output().split(' Runtime.Counters IntervalMs ').length > 2);
  cli.child.kill('SIGINT');
  const r = await cli.done;
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n').filter((l) => !l.includes(' stall: '));
  for (const l of lines) assert.match(l, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (Runtime\.Counters|Demo\.App) \w+ -?[\d.,]+ \S.*$/);
  assert.ok(lines.some((l) => / Runtime\.Counters GcCount [\d.]+ collections \/ 1 s$/.test(l)), 'rates for interval counters');
  assert.ok(lines.some((l) => / Runtime\.Counters HeapUsed [\d.]+ MiB$/.test(l)));
  assert.ok(lines.some((l) => / Demo\.App Inflight \d+ requests$/.test(l)));
  assert.equal(await sessionsOf(tg.pid), 0);
});

/**
 * Runs the monitor in a pseudo-terminal (util-linux `script`) of 120×60. `steps` run at their times
 * (ms) after the first frame with figures: a string is typed, a function called; with `shrinkAtMs`
 * (from the start), the window is made 70×40 then (the terminal sends SIGWINCH).
 */
async function monitorInTerminal(t, pid, steps, shrinkAtMs) {
  const shrink = shrinkAtMs ? `(sleep ${shrinkAtMs / 1000}; stty cols 70 rows 40 < /dev/tty) & ` : '';
  const command = `stty cols 120 rows 60; ${shrink}exec ${process.execPath} ${CLI} counters monitor --pid ${pid} --counters Runtime.Counters,Demo.App`;
  const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd: dir, env: { ...process.env, TMPDIR: dir }, stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  let out = '';
  let started = false;
  child.stdout.setEncoding('utf8').on('data', (d) => {
    out += d;
    // The keys wait for the screen: typed earlier, they would reach a terminal not yet in raw mode.
    if (started || !out.includes('figures of')) return;
    started = true;
    for (const [atMs, step] of steps) setTimeout(() => (typeof step === 'string' ? child.stdin.write(step) : step()), atMs);
  });
  const [code] = await once(child, 'exit');
  return { code, out };
}

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** Each redraw: its lines, styles removed. */
function framesOf(out) {
  return out.split('\x1b[H').slice(1).map((f) => f.split('\x1b[?25h')[0].replace(ANSI, '').split(/\r*\n/));
}

function figure(frame, name) {
  const line = frame.find((l) => new RegExp(`^ {4}${name} `).test(l));
  return line === undefined ? undefined : Number(line.trim().split(/\s+/).at(-1).replaceAll(',', ''));
}

test('counters monitor on a terminal: redraws in place, values change and agree with the target’s memoryUsage(); q exits and stops the session', { timeout: 60_000 }, async (t) => {
  const memFile = join(dir, 'mem.json');
  const tg = await target(t, { MEM_FILE: memFile, CHURN: '100' });
  // The target's own figures while the session runs (its buffers and drain thread go when it stops).
  let mem;
  const readMem = async () => (mem = JSON.parse(await readFile(memFile, 'utf8')));
  const { code, out } = await monitorInTerminal(t, tg.pid, [[1000, 'p'], [2000, 'r'], [5800, readMem], [6000, 'q']], 5000);
  assert.equal(code, 0, out.slice(-500));
  assert.ok(framesOf(out).some((f) => f[1].includes('PAUSED (r resumes)')), 'p pauses');
  assert.ok(out.startsWith('\x1b[?1049h'), 'the alternate screen');
  assert.ok(out.includes('\x1b[?1049l'), 'and back at the end');
  const frames = framesOf(out).filter((f) => figure(f, 'HeapUsed') !== undefined);
  assert.ok(frames.length >= 3, `redrawn (${frames.length} frames with figures)`);
  // In place: every frame starts at the top-left corner and fits the 60 rows (nothing scrolls).
  for (const f of framesOf(out)) assert.ok(f.length <= 60, `a frame of ${f.length} lines`);
  // Resized to 70×40: the frames after it fit the new window, the last line saying what is left out.
  const small = framesOf(out).filter((f) => f.length <= 40 && f.every((l) => l.length <= 70));
  assert.ok(small.length >= 1 && small.at(-1).at(-1).includes('more lines: enlarge the window'), 'redrawn for the smaller window');
  assert.ok(!/(\r*\n){4}/.test(out.replace(ANSI, '')), 'no run of empty lines pushing the screen');
  const cpu = new Set(frames.map((f) => figure(f, 'CpuUser')));
  const inflight = new Set(frames.map((f) => figure(f, 'Inflight')));
  assert.ok(cpu.size > 1 || inflight.size > 1, 'values change between frames');
  const large = frames.filter((f) => f.length > 40);
  assert.ok(large.at(-1).some((l) => l === '[Demo.App]'), `grouped by provider:\n${large.at(-1).join('\n')}`);
  assert.ok(large.at(-1).some((l) => /^ {4}GcCount +collections \/ 1 s +[\d.]+$/.test(l)), 'rates, values right-aligned');
  const last = frames.findLast((f) => figure(f, 'Rss') !== undefined);
  const heapMiB = mem.heapUsed / 2 ** 20;
  const rssMiB = mem.rss / 2 ** 20;
  assert.ok(Math.abs(figure(last, 'HeapUsed') - heapMiB) / heapMiB < 0.1, `heap used ${figure(last, 'HeapUsed')} MiB vs ${heapMiB.toFixed(1)} MiB`);
  assert.ok(Math.abs(figure(last, 'Rss') - rssMiB) / rssMiB < 0.1, `RSS ${figure(last, 'Rss')} MiB vs ${rssMiB.toFixed(1)} MiB`);
  assert.equal(await sessionsOf(tg.pid), 0, 'q stopped the session');
});

test('counters monitor: a target that never yields for 2 s shows as blocked while the screen keeps redrawing, and that interval’s CPU and GC figures are right', { timeout: 60_000 }, async (t) => {
  const stallFile = join(dir, 'stall.json');
  const tg = await target(t, { STALL_MS: '2000', STALL_AT_MS: '2500', STALL_FILE: stallFile, CHURN: '100' });
  const json = join(dir, 'stall-figures.json');
  const collecting = startCli(t, dir, ['counters', 'collect', '--pid', String(tg.pid), '--format', 'json', '-o', json, '--duration', '7s']).done;
  const { code, out } = await monitorInTerminal(t, tg.pid, [[5500, 'q']]);
  assert.equal(code, 0);
  const blocked = framesOf(out).filter((f) => f.some((l) => /event loop is blocked: [\d.]+ s so far|no figures for [\d.]+ s/.test(l)));
  assert.ok(blocked.length >= 2, `redrawn during the stall, saying so (${blocked.length} frames)`);
  assert.ok(framesOf(out).some((f) => f.some((l) => /event loop was blocked for [\d.]+ s/.test(l))), 'the stall, once over');
  assert.equal((await collecting).code, 0);
  const stall = JSON.parse(await readFile(stallFile, 'utf8'));
  const byTime = groupBy(parseJson(await readFile(json, 'utf8')), (r) => r.time);
  const value = (g, name) => g.find((r) => r.name === name).value;
  const stalled = [...byTime.values()].find((g) => value(g, 'IntervalMs') >= stall.ms);
  assert.ok(stalled, 'one interval spans the stall');
  const intervalMs = value(stalled, 'IntervalMs');
  const cpuMs = (value(stalled, 'CpuUser') * intervalMs) / 100;
  assert.ok(cpuMs >= stall.cpuUserMs * 0.95 && cpuMs <= stall.cpuUserMs + (intervalMs - stall.ms) + 50, `CPU ${cpuMs.toFixed(0)} ms in the interval, ${stall.cpuUserMs.toFixed(0)} ms in the stall`);
  const gc = value(stalled, 'GcCount');
  assert.ok(stall.gcCount >= 3, `the stall collected (${stall.gcCount})`);
  assert.ok(gc >= stall.gcCount && gc <= stall.gcCount + 3, `GcCount ${gc} in the interval, ${stall.gcCount} pauses in the stall`);
  assert.ok(value(stalled, 'LoopDelayMax') >= stall.ms * 0.9, 'the delay shows the stall');
});
