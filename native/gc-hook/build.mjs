// Builds tracepipe's optional native addon at install (npm's "install" script) for the Node.js running
// it, every target of binding.gyp in one node-gyp run: the GC hook (gc_hook.node), the heap snapshot
// stream (heap_snapshot.node), the main loop's idle time for the stall watchdog (loop_metrics.node),
// the signal flush (signal_flush.node: a session's file ends complete when SIGTERM kills the process),
// the native drain (native_drain.node: a Drop-mode session's file drained without a worker thread),
// the state of a span's promise (promise_state.node), the CPU sampler (cpu_sampler.node) and the
// code caches' checksum (code_cache.node: without it, tracepipe's bundles compile from source).
// It is optional: without a compiler, Python or Node's headers, tracepipe installs and runs,
// Runtime.GC falls back to perf_hooks, Runtime.HeapSnapshot and Runtime.CpuSampler to the inspector and
// the watchdog to /proc schedstat, every session drains through a worker thread, and a signal kills the process with its file ending at the drain's last pass
// (docs/PROVIDERS.md, docs/GCDUMP.md and docs/IPC.md say what that loses). So this never fails the install: it
// says in one line why the addon was not built, and exits 0. TRACEPIPE_GC_HOOK=0 skips the build.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const BUILD_TIMEOUT_MS = 5 * 60_000;

/** npm passes its bundled node-gyp to install scripts; outside npm, look beside this Node's npm. */
function findNodeGyp() {
  const candidates = [process.env.npm_config_node_gyp, join(dirname(process.execPath), '../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js')];
  return candidates.find((p) => p && existsSync(p));
}

function skip(reason) {
  process.stderr.write(`tracepipe: native addon not built (${reason}); Runtime.GC uses perf_hooks and Runtime.HeapSnapshot and Runtime.CpuSampler the inspector instead, and a file ends at its last flush when a signal kills the process; see docs/PROVIDERS.md\n`);
  process.exit(0);
}

if (process.env.TRACEPIPE_GC_HOOK === '0') skip('TRACEPIPE_GC_HOOK=0');
const gyp = findNodeGyp();
if (!gyp) skip('node-gyp not found');
const log = join(here, 'build-error.log');
rmSync(log, { force: true });
const r = spawnSync(process.execPath, [gyp, 'rebuild'], { cwd: here, encoding: 'utf8', timeout: BUILD_TIMEOUT_MS });
if (r.status !== 0) {
  writeFileSync(log, `${r.error ? `${r.error.message}\n` : ''}${r.stdout ?? ''}${r.stderr ?? ''}`);
  skip(`node-gyp failed${r.error ? `: ${r.error.message}` : ''}; log in ${log}`);
}
