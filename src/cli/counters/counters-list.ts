import type { CounterDescription } from '../../analysis/counter-samples.js';
import { writeOut } from '../output.js';
import { CounterBoard } from './counter-board.js';
import type { CounterSession } from './counter-session.js';

/** How long a live process gets to describe its counters. */
const DESCRIBE_WAIT_MS = 10_000;

/** The counters a live process describes as a session starts (its CounterInfo events), Runtime.Counters' included. */
export async function liveCounters(session: CounterSession): Promise<CounterDescription[]> {
  const board = new CounterBoard(new Set(), () => undefined);
  const timer = setTimeout(() => void session.stop(), DESCRIBE_WAIT_MS);
  try {
    for await (const e of session.events()) {
      board.push(e);
      // Written together as the session starts: the stop's flush brings the rest.
      if (e.name === 'CounterInfo') void session.stop();
    }
  } finally {
    clearTimeout(timer);
  }
  return board.catalog();
}

/** The counters as a table, grouped by provider. */
export async function printCounters(counters: readonly CounterDescription[]): Promise<void> {
  const nameW = Math.max(...counters.map((c) => c.name.length));
  const unitW = Math.max(...counters.map((c) => c.unit.length));
  let provider = '';
  let text = '';
  for (const c of [...counters].sort((a, b) => a.provider.localeCompare(b.provider))) {
    if (c.provider !== provider) {
      provider = c.provider;
      text += `${text ? '\n' : ''}${provider}\n`;
    }
    text += `  ${c.name.padEnd(nameW)}  ${c.unit.padEnd(unitW)}  ${c.kind.padEnd(8)}  ${c.description}\n`;
  }
  await writeOut(text);
}
