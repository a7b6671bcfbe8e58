import { constants } from 'node:fs';
import { mkdir, open, readdir, type FileHandle } from 'node:fs/promises';
import { errorMessage } from '../schema/error-message.js';
import { createNewFile, openPrivateFile, PRIVATE_DIR_MODE } from '../sinks/private-file.js';

/** Buffered bytes are written out once they pass this size: large writes, bounded memory. */
export const FLUSH_BYTES = 1 << 20;
/** Copies are made in buffers sized in steps of this, so a file's next write usually fits the last one's. */
const SLAB_STEP = 64 << 10;

/**
 * One output file (or stdout, for `-o -`), counting bytes. One write is in flight while the converter
 * fills its next buffer, so encoding and the disk overlap; a write waits for the previous one, which
 * bounds memory to two buffers.
 */
export class ExportOutput {
  bytes = 0;
  private inFlight: Promise<void> = Promise.resolve();
  /** Buffers whose write has finished, reused for copies (allocating a fresh 1 MiB each time costs page faults). */
  private readonly spare: Buffer[] = [];

  private constructor(
    readonly path: string,
    private readonly fh: FileHandle | undefined,
  ) {}

  /** The output file the user named (or stdout, for `-`), readable by its owner only (see openPrivateFile). */
  static async create(path: string): Promise<ExportOutput> {
    if (path === '-') return new ExportOutput(path, undefined);
    return new ExportOutput(path, await openPrivateFile(path));
  }

  /** A file in a directory made by prepareDirectory: it must not exist, so nothing planted there is followed. */
  static async createNew(path: string): Promise<ExportOutput> {
    return new ExportOutput(path, await createNewFile(path));
  }

  /** Reopens a file this conversion created and closed, to write on at its end. */
  /** Reopens a file this export created (createNew) to append to it; a link put in its place meanwhile is refused, not followed. */
  static async append(path: string): Promise<ExportOutput> {
    return new ExportOutput(path, await open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW));
  }

  /** Takes a copy of `data`: the caller may reuse its buffer as soon as this resolves. */
  async write(data: Uint8Array | string): Promise<void> {
    if (data.length === 0) return;
    await this.inFlight;
    const length = typeof data === 'string' ? Buffer.byteLength(data) : data.length;
    let slab = this.spare.pop();
    if (!slab || slab.length < length) slab = Buffer.allocUnsafeSlow(Math.ceil(length / SLAB_STEP) * SLAB_STEP);
    const bytes = slab.subarray(0, length);
    if (typeof data === 'string') bytes.write(data, 'utf8');
    else bytes.set(data);
    this.bytes += length;
    this.inFlight = this.send(bytes, slab);
  }

  private async send(bytes: Buffer, slab: Buffer): Promise<void> {
    if (!this.fh) {
      if (process.stdout.destroyed) throw new Error('stdout closed before the conversion finished');
      // stdout keeps the buffer until the write is done (its callback, called on failure too; the
      // error itself goes to stdout's 'error' listeners): only then may it take the next copy. A
      // fresh slab per write instead left the allocator hundreds of freed megabytes to reuse.
      await new Promise<void>((resolve) => process.stdout.write(bytes, () => resolve()));
      this.spare.push(slab);
      return;
    }
    let off = 0;
    while (off < bytes.length) off += (await this.fh.write(bytes, off, bytes.length - off)).bytesWritten;
    this.spare.push(slab);
  }

  async close(): Promise<void> {
    try {
      await this.inFlight;
    } finally {
      await this.fh?.close();
    }
  }
}

/** Resolves when `stream` can take more, or has closed; leaves no listener behind. */
export function drained(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}

/**
 * Makes `dir` for a format that writes a directory of files, readable by its owner only (0700). An
 * existing directory must be empty, so files of an earlier conversion are never mixed with this one's.
 */
export async function prepareDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') throw new ExportTargetError(`${dir} exists and is not a directory; this format writes a directory of files`);
    throw new ExportTargetError(`cannot create ${dir}: ${errorMessage(e)}`);
  }
  const present = await readdir(dir);
  if (present.length > 0) throw new ExportTargetError(`${dir} is not empty (${present.length} entries); remove it or choose another -o`);
}

/** The output cannot be written where asked (a user mistake, reported in one line). */
export class ExportTargetError extends Error {
  override readonly name = 'ExportTargetError';
}
