import { isatty } from 'node:tty';
import type { TraceEvent } from '../../format/trace-event.js';
import { writeErr, writeOut } from '../output.js';
import { type BoardInterval, CounterBoard } from './counter-board.js';
import { CounterScreen } from './counter-screen.js';
import type { CounterSession } from './counter-session.js';
import { unitLabel, valueText, wallClock } from './counter-text.js';

/** Figures late by more than this share of the refresh (plus half a second) are called missing. */
const LATE_SHARE = 1.5;

/** While the target's loop is blocked, the screen's "so far" counts up at this pace (ms). */
const STALL_TICK_MS = 250;

/** What the monitor knows of the target's event loop from Runtime.EventLoop's stall events. */
class StallWatch {
  /** Wall ms when the ongoing stall began (its StallStart says how long it had lasted), or undefined. */
  since: number | undefined;
  lastMs: number | undefined;
  lastEndedAt: number | undefined;

  /** Takes a stall event; true when a stall began or ended with it. */
  push(e: TraceEvent): boolean {
    if (e.provider !== 'Runtime.EventLoop') return false;
    if (e.name === 'StallStart') {
      if (this.since !== undefined) return false;
      this.since = Date.now() - Number(e.fields.blockedMs);
      return true;
    }
    if (e.name !== 'StallEnd') return false;
    this.since = undefined;
    this.lastMs = Number(e.fields.durationMs);
    this.lastEndedAt = Date.now();
    return true;
  }
}

function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

/**
 * `tracepipe counters monitor`: a live screen on a terminal (p pauses, r resumes, q or Ctrl-C
 * quits), plain timestamped lines otherwise. Returns when the user quits or the session ends.
 */
export async function monitor(session: CounterSession, shown: ReadonlySet<string>, refreshMs: number): Promise<void> {
  const tty = isatty(1) && process.stdout.isTTY;
  const stall = new StallWatch();
  let latest: BoardInterval | undefined;
  let previousNs = -Infinity;
  let lastAt = Date.now();
  let paused = false;
  let lines = Promise.resolve();
  const board = new CounterBoard(shown, (i) => {
    previousNs = latest?.timestampNs ?? -Infinity;
    latest = i;
    lastAt = Date.now();
    if (tty) {
      if (!paused) draw();
    } else {
      const at = session.originWallNs === undefined ? new Date() : wallClock(session.originWallNs, i.timestampNs);
      const text = i.rows.map((r) => `${at.toISOString()} ${r.provider} ${r.name} ${valueText(r)} ${unitLabel(r)}\n`).join('');
      lines = lines.then(() => writeOut(text));
    }
  });
  const screen = tty ? new CounterScreen(process.stdout) : undefined;
  const alert = (): string => {
    const now = Date.now();
    if (stall.since !== undefined) return `the target's event loop is blocked: ${((now - stall.since) / 1000).toFixed(1)} s so far (figures resume when it turns)`;
    if (now - lastAt > refreshMs * LATE_SHARE + 500) return `no figures for ${((now - lastAt) / 1000).toFixed(1)} s`;
    if (stall.lastMs !== undefined && now - stall.lastEndedAt! < 10_000) return `the event loop was blocked for ${(stall.lastMs / 1000).toFixed(2)} s until ${clock(stall.lastEndedAt!)}`;
    return '';
  };
  let drawnAt = 0;
  const draw = (): void => {
    drawnAt = Date.now();
    screen!.draw({
      title: ` tracepipe counters  process ${session.pid}  ${session.argv.join(' ')} `,
      status: `session ${session.sessionId} · refresh ${refreshMs / 1000} s · ${latest ? `figures of ${clock(lastAt)}` : 'waiting for the first figures'}${paused ? ' · PAUSED (r resumes)' : ''} · p pause  r resume  q quit`,
      alert: alert(),
      rows: latest?.rows ?? [],
      changedSinceNs: previousNs,
    });
  };
  let quitting = false;
  const quit = (): void => {
    quitting = true;
    void session.stop();
  };
  const onKey = (data: Buffer): void => {
    for (const c of data.toString('latin1')) {
      if (c === 'q' || c === 'Q' || c === '\x03') quit();
      else if (c === 'p' || c === 'P') paused = true;
      else if (c === 'r' || c === 'R') paused = false;
    }
    draw();
  };
  let redraw: NodeJS.Timeout | undefined;
  const keys = tty && process.stdin.isTTY;
  process.on('SIGINT', quit).on('SIGTERM', quit);
  try {
    if (screen) {
      screen.open();
      draw();
      // Redrawn on a timer too, so a stalled target shows as such while no figures come: at
      // least once a second, and while a stall lasts often enough for its length to count up.
      const idleRedrawMs = Math.min(refreshMs, 1000);
      redraw = setInterval(() => {
        if (!paused && (stall.since !== undefined || Date.now() - drawnAt >= idleRedrawMs - STALL_TICK_MS / 2)) draw();
      }, STALL_TICK_MS);
      if (keys) {
        process.stdin.setRawMode(true);
        process.stdin.on('data', onKey).resume();
      }
    }
    for await (const e of session.events()) {
      // A stall's start and end show at once, not at the next tick.
      if (stall.push(e) && screen && !paused) draw();
      if (!tty && e.provider === 'Runtime.EventLoop' && e.name === 'StallStart') {
        lines = lines.then(() => writeOut(`${new Date().toISOString()} stall: the event loop of process ${session.pid} has been blocked for ${(Number(e.fields.blockedMs) / 1000).toFixed(1)} s\n`));
      }
      board.push(e);
    }
    await lines;
  } finally {
    clearInterval(redraw);
    process.off('SIGINT', quit).off('SIGTERM', quit);
    if (keys) {
      process.stdin.off('data', onKey).pause();
      process.stdin.setRawMode(false);
    }
    screen?.close();
  }
  if (!quitting) writeErr(`tracepipe: the session in process ${session.pid} ended (the process exited, or its session was stopped)\n`);
}
