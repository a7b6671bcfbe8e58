import { requireBuiltin } from '../../schema/this-thread.js';
import { SampleWriter, StackTable } from './sample-writer.js';
const { Session } = requireBuiltin('node:inspector') as typeof import('node:inspector');

/** How often the fallback stops and restarts its profile: each restart is cold (see below). */
export const INSPECTOR_ROTATE_SEC = 1;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/**
 * The fallback without the native addon: the inspector's Profiler domain on a session of this thread
 * (same-thread sessions answer synchronously). It holds one profile at a time, so each rotation stops
 * the profile (losing the samples V8 has not processed yet, a few ms) and starts a new one (cold: V8
 * logs the code again). It rotates when the loop turns, so a thread that never yields writes its
 * samples only once it does, and those of a process that ends inside a stall are lost
 * (docs/PROVIDERS.md).
 */
export class InspectorRoute {
  readonly writer = new SampleWriter(new StackTable());
  private readonly session = new Session();
  private running = false;

  constructor(
    private readonly thread: number,
    private intervalUs: number,
  ) {
    this.session.connect();
    this.post('Profiler.enable');
    this.start();
  }

  setInterval(us: number): void {
    this.intervalUs = us;
  }

  /** Writes what the profile holds so far and starts the next one. */
  rotate(): void {
    this.collect();
    this.start();
  }

  stop(): void {
    this.collect();
    this.session.disconnect();
  }

  private start(): void {
    this.post('Profiler.setSamplingInterval', { interval: this.intervalUs });
    this.running = this.post('Profiler.start') !== undefined;
  }

  private collect(): void {
    if (!this.running) return;
    this.running = false;
    const result = this.post('Profiler.stop') as { profile?: Profile } | undefined;
    if (result?.profile) this.write(result.profile);
  }

  private write(profile: Profile): void {
    const table = this.writer.table;
    // Parents from children lists; V8's "(root)" (the node without a parent) is no frame of the program.
    const parentOf = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
    const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
    const stackOf = new Map<number, number>();
    const resolve = (id: number): number => {
      const known = stackOf.get(id);
      if (known !== undefined) return known;
      const chain: ProfileNode[] = [];
      let stack = 0;
      for (let n = nodes.get(id); n && parentOf.has(n.id); n = nodes.get(parentOf.get(n.id)!)) {
        const seen = stackOf.get(n.id);
        if (seen !== undefined) {
          stack = seen;
          break;
        }
        chain.push(n);
      }
      for (let i = chain.length - 1; i >= 0; i--) {
        const f = chain[i]!.callFrame;
        // The inspector counts lines and columns from 0; the stream from 1 (0: unknown).
        stack = table.internStack(table.internFrame(f.functionName, f.url, f.lineNumber + 1, f.columnNumber + 1), stack);
        stackOf.set(chain[i]!.id, stack);
      }
      return stack;
    };
    const samples = profile.samples ?? [];
    const deltas = profile.timeDeltas ?? [];
    const times = new Float64Array(samples.length);
    const stacks = new Uint32Array(samples.length);
    let at = profile.startTime;
    for (let i = 0; i < samples.length; i++) {
      at += deltas[i] ?? 0;
      times[i] = at;
      stacks[i] = resolve(samples[i]!);
    }
    this.writer.write(this.thread, times, stacks);
  }

  /** Same-thread sessions answer before post() returns. */
  private post(method: string, params?: object): object | undefined {
    let answer: object | undefined;
    this.session.post(method, params, (err, result) => {
      if (!err) answer = result ?? {};
    });
    return answer;
  }
}
