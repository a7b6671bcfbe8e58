// report on a real traced process (Runtime.CpuSampler, Runtime.EventLoop and a span, from a startup
// session): a main thread that stalls 300 ms at a time in a known function. Each stall, and each of
// the slowest spans, names that function as the one on CPU during it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { cli } from './helpers/convert-helpers.mjs';
import { tempDir } from './helpers/temp-dir.mjs';

const FIXTURE = fileURLToPath(new URL('./fixtures/cpu-stall.mjs', import.meta.url));
const REGISTER = new URL('../dist/register.js', import.meta.url).href;
const execFileAsync = promisify(execFile);
const FUNCTION = /^blockFor300ms \(cpu-stall\.mjs:8\)$/;

test('a real process stalling 300 ms in blockFor300ms: every stall and every slowest span of report names it as on CPU', { timeout: 120_000 }, async (t) => {
  const file = join(await tempDir(t), 'stalls.tptrace');
  // A startup session: tracepipe/register reads the variables in the child.
  const env = { ...process.env, TRACEPIPE_ENABLE: '1', TRACEPIPE_PROVIDERS: 'Runtime.CpuSampler,Runtime.EventLoop,Test.Stalls', TRACEPIPE_OUTPUT: file };
  await execFileAsync(process.execPath, [`--import=${REGISTER}`, FIXTURE], { env, timeout: 60_000 });
  const r = await cli(['report', file, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.ok(report.cpu.samples > 300, `samples: ${report.cpu.samples}`);
  assert.match(report.cpu.threads.find((x) => x.thread === 0).bySelf[0].function, FUNCTION, 'it tops the self-time list');
  const stalls = report.stalls.longest.filter((s) => s.thread === 0 && s.durationMs >= 200);
  assert.equal(stalls.length, 3, `the three stalls: ${JSON.stringify(report.stalls.longest.map((s) => s.durationMs))}`);
  const spans = report.spans.slowest.filter((s) => s.span === 'Test.Stalls/Job');
  assert.equal(spans.length, 3);
  for (const item of [...stalls, ...spans]) {
    const [top] = item.onCpu.functions;
    assert.match(top.function, FUNCTION, JSON.stringify(item.onCpu));
    // Shares of what was sampled in the interval; the rest of the time (descheduled on a busy machine) is said, not hidden.
    assert.ok(top.percent > 50, `${top.function}: ${top.percent.toFixed(1)} % of ${item.onCpu.sampledMs.toFixed(1)} ms sampled`);
    assert.ok(item.onCpu.sampledMs <= item.onCpu.intervalMs + 1e-6);
  }
  const text = await cli(['report', file]);
  assert.equal(text.code, 0, text.stderr);
  const onCpu = text.stdout.split('\n').filter((l) => /^\s+on CPU \(/.test(l));
  assert.ok(onCpu.length >= 6, text.stdout);
  assert.equal(onCpu.filter((l) => /: blockFor300ms \(cpu-stall\.mjs:8\) \d+ %/.test(l)).length, 6, onCpu.join('\n'));
});
