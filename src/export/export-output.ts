import { once } from 'node:events';
import { mkdir, open, readdir, type FileHandle } from 'node:fs/promises';

/** Buffered bytes are written out once they pass this size: large writes, bounded memory. */
export const FLUSH_BYTES = 1 << 20;

/** One output file (or stdout, for `-o -`): writes wait for the disk or the pipe, and count bytes. */
export class ExportOutput {
  bytes = 0;

  private constructor(
    readonly path: string,
    private readonly fh: FileHandle | undefined,
  ) {}

  static async create(path: string): Promise<ExportOutput> {
    if (path === '-') return new ExportOutput(path, undefined);
    return new ExportOutput(path, await open(path, 'w', 0o644));
  }

  async write(data: Uint8Array | string): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (bytes.length === 0) return;
    this.bytes += bytes.length;
    if (this.fh) {
      let off = 0;
      while (off < bytes.length) off += (await this.fh.write(bytes, off, bytes.length - off)).bytesWritten;
      return;
    }
    if (process.stdout.destroyed) throw new Error('stdout closed before the conversion finished');
    if (!process.stdout.write(bytes)) await Promise.race([once(process.stdout, 'drain'), once(process.stdout, 'close')]);
  }

  async close(): Promise<void> {
    await this.fh?.close();
  }
}

/**
 * Makes `dir` for a format that writes a directory of files. An existing directory must be empty, so
 * files of an earlier conversion are never mixed with this one's.
 */
export async function prepareDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const present = await readdir(dir);
  if (present.length > 0) throw new ExportTargetError(`${dir} is not empty (${present.length} entries); remove it or choose another -o`);
}

/** The output cannot be written where asked (a user mistake, reported in one line). */
export class ExportTargetError extends Error {
  override readonly name = 'ExportTargetError';
}
