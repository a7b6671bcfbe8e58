// Runs `body` under a file session of `providers` and reads the trace back: what the spans tests check.
import { join } from 'node:path';
import { readTrace, startSession } from '../../dist/index.js';
import { tempDir } from './temp-dir.mjs';

/** Resolves to the trace file and every event in it, once the session `body` ran under has stopped. */
export async function recordSession(t, providers, body) {
  const file = join(await tempDir(t), 'spans.tptrace');
  const session = await startSession({ providers, output: file });
  try {
    await body();
  } finally {
    await session.stop();
  }
  const events = [];
  for await (const e of readTrace(file)) events.push(e);
  return { file, events };
}
