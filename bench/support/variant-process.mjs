import { spawn } from 'node:child_process';

/**
 * Runs one measured variant in a fresh Node process, so no variant inherits another's JIT state,
 * heap or buffers. The child prints its result as a JSON object on its last stdout line.
 */
export function runVariant(script, args = [], { nodeArgs = [], timeoutMs = 120_000, env = process.env, prefix = [], node = process.execPath } = {}) {
  return new Promise((resolve, reject) => {
    // `prefix`: a command that runs Node, e.g. taskset's pinning (support/pinning.mjs); `node`: another Node.js binary.
    const argv = [...prefix, node, ...nodeArgs, script, ...args];
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'], env });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} ${args.join(' ')}: no result after ${timeoutMs / 1000} s (killed; a hang?)`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0) return reject(new Error(`${script} ${args.join(' ')} exited with ${signal ?? code}: ${last}`));
      try {
        resolve(JSON.parse(last));
      } catch {
        reject(new Error(`${script} ${args.join(' ')} printed no JSON result: ${last}`));
      }
    });
  });
}

/** The child side: report the result and leave. */
export function reportResult(result) {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** Runs every variant once per round, rotating the order each round so none always goes first. */
export async function interleavedRounds(rounds, variants, runOne) {
  const results = Object.fromEntries(variants.map((v) => [v, []]));
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < variants.length; k++) {
      const v = variants[(r + k) % variants.length];
      results[v].push(await runOne(v, r));
    }
  }
  return results;
}
