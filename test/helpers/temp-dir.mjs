import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory under the OS temp dir, removed when the test `t` (or suite hook owner) ends. */
export async function tempDir(t) {
  const dir = await mkdtemp(join(tmpdir(), 'tracepipe-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}
