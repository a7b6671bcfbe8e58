import { requireBuiltin } from '../schema/this-thread.js';
const { closeSync, openSync, readlinkSync, readSync } = requireBuiltin('node:fs') as typeof import('node:fs');

/**
 * One reading of a thread's Linux scheduler statistics (`/proc/.../schedstat`): how long it has been
 * runnable (on a CPU, or ready and waiting for one) and how many times it was put on a CPU. A thread
 * asleep (in epoll, or in a blocking system call) adds to neither.
 */
export class SchedSample {
  runnableNs = 0;
  arrivals = 0;
}

/** Room for three decimal numbers of up to 20 digits. */
const LINE_BYTES = 80;

/**
 * A thread's schedstat file, kept open: a reading is one pread, no allocation, so a watchdog can
 * take one every poll. Undefined where there is no such file (not Linux, no /proc).
 */
export class ThreadSchedStat {
  private readonly line = new Uint8Array(LINE_BYTES);

  private constructor(private fd: number) {}

  private static open(path: string): ThreadSchedStat | undefined {
    try {
      const stat = new ThreadSchedStat(openSync(path, 'r'));
      return stat.read(new SchedSample()) ? stat : (stat.close(), undefined);
    } catch {
      return undefined;
    }
  }

  /** Thread `tid` of this process (the main thread's is the process id), from any thread. */
  static ofThread(tid: number): ThreadSchedStat | undefined {
    return ThreadSchedStat.open(`/proc/self/task/${tid}/schedstat`);
  }

  /** The calling thread's own. */
  static ofThisThread(): ThreadSchedStat | undefined {
    return ThreadSchedStat.open('/proc/thread-self/schedstat');
  }

  /** Fills `into`; false when the file cannot be read (the thread is gone). */
  read(into: SchedSample): boolean {
    let n: number;
    try {
      n = readSync(this.fd, this.line, 0, LINE_BYTES, 0);
    } catch {
      return false;
    }
    // "<on-CPU ns> <waiting ns> <times run>\n"
    let onCpu = 0;
    let waiting = 0;
    let runs = 0;
    let field = 0;
    let inNumber = false;
    for (let i = 0; i < n && field < 3; i++) {
      const d = this.line[i]! - 48;
      if (d >= 0 && d <= 9) {
        if (field === 0) onCpu = onCpu * 10 + d;
        else if (field === 1) waiting = waiting * 10 + d;
        else runs = runs * 10 + d;
        inNumber = true;
      } else if (inNumber) {
        field++;
        inNumber = false;
      }
    }
    if (field + (inNumber ? 1 : 0) < 3) return false;
    into.runnableNs = onCpu + waiting;
    into.arrivals = runs;
    return true;
  }

  close(): void {
    if (this.fd < 0) return;
    closeSync(this.fd);
    this.fd = -1;
  }
}

let osThreadId: number | undefined;

/**
 * The kernel's id of the calling thread (its `/proc/self/task/` entry), read once per thread; 0 where
 * there is no /proc. A stopping drain watches the threads of open slots by it (drain/running-threads.ts).
 */
export function thisOsThreadId(): number {
  if (osThreadId === undefined) {
    try {
      // "<pid>/task/<tid>"
      osThreadId = Number(readlinkSync('/proc/thread-self').split('/')[2]) || 0;
    } catch {
      osThreadId = 0;
    }
  }
  return osThreadId;
}
