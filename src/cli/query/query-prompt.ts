import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { writePrivateFile } from '../../sinks/private-file.js';
import { isQueryFormat, type QueryFormat, QUERY_FORMATS } from './query-format.js';
import { isSqlError, type TraceDatabase } from './query-engine.js';
import { formatSchema, sqlName } from './query-schema.js';

const PROMPT = 'tracepipe> ';
const CONTINUED = '      ...> ';
/** Lines of history kept between sessions. */
const HISTORY_LINES = 1000;

const HELP = `Statements end with ';' and may span lines. Commands:
  .tables             the tables and views
  .schema [TABLE]     their columns and types
  .format [${QUERY_FORMATS.join('|')}]  how results print
  .help               this
  .quit               leave (Ctrl-D too); Ctrl-C stops a running statement
`;

/** The history file: TRACEPIPE_HISTORY, or ~/.tracepipe_history. */
const historyFile = (): string => process.env.TRACEPIPE_HISTORY ?? join(homedir(), '.tracepipe_history');

async function loadHistory(file: string): Promise<string[]> {
  try {
    // Newest last in the file; readline wants newest first.
    return (await readFile(file, 'utf8')).split('\n').filter((l) => l !== '').slice(-HISTORY_LINES).reverse();
  } catch {
    return [];
  }
}

export interface PromptSession {
  readonly db: TraceDatabase;
  format: QueryFormat;
  /** Runs `sql` and prints its results in `format`; rejects with a SqlError for a refused statement. */
  run(sql: string, format: QueryFormat): Promise<void>;
  write(text: string): Promise<void>;
}

/** A dot command; resolves false for `.quit`. */
async function dotCommand(line: string, s: PromptSession): Promise<boolean> {
  const [command, ...args] = line.split(/\s+/);
  switch (command) {
    case '.quit':
    case '.exit':
      return false;
    case '.help':
      await s.write(HELP);
      break;
    case '.tables':
      await s.write(`${(await s.db.schema()).map((t) => sqlName(t.name)).join('\n')}\n`);
      break;
    case '.schema': {
      const wanted = args.join(' ').replace(/^"(.*)"$/, '$1').toLowerCase();
      const tables = (await s.db.schema()).filter((t) => wanted === '' || t.name.toLowerCase() === wanted);
      await s.write(tables.length > 0 ? formatSchema(tables, s.format) : `no table or view named ${args.join(' ')}; .tables lists them\n`);
      break;
    }
    case '.format':
      if (args.length === 0) await s.write(`${s.format}\n`);
      else if (isQueryFormat(args[0]!)) s.format = args[0];
      else await s.write(`.format takes ${QUERY_FORMATS.join(', ')}, not '${args[0]}'\n`);
      break;
    default:
      await s.write(`unknown command ${command}; .help lists them\n`);
  }
  return true;
}

/**
 * The interactive prompt on a terminal (node:readline: line editing, history kept in
 * ~/.tracepipe_history). It ends at `.quit` or end of input (Ctrl-D); Ctrl-C stops the running
 * statement, or drops a half-typed one.
 */
export async function queryPrompt(s: PromptSession): Promise<void> {
  const file = historyFile();
  const rl = createInterface({
    input: process.stdin,
    output: process.stdout,
    prompt: PROMPT,
    history: await loadHistory(file),
    historySize: HISTORY_LINES,
    removeHistoryDuplicates: true,
    terminal: true,
  });
  let history: string[] | undefined;
  rl.on('history', (h) => (history = h));
  let pending = '';
  let running = false;
  rl.on('SIGINT', () => {
    if (running) return s.db.interrupt();
    const typed = pending !== '' || rl.line !== '';
    // Drops what was typed: the statement so far, and the line (Ctrl-E, Ctrl-U: to its end, then all of it).
    rl.write(null, { ctrl: true, name: 'e' });
    rl.write(null, { ctrl: true, name: 'u' });
    process.stdout.write(typed ? '\n' : '\n(.quit or Ctrl-D leaves)\n');
    pending = '';
    rl.setPrompt(PROMPT);
    rl.prompt();
  });
  await s.write(`${s.db.traces.map((t) => `${t.file}: ${t.events.toLocaleString('en-US')} events`).join('\n')}\n.help for help, .tables for the tables; end statements with ';'\n`);
  rl.prompt();
  for await (const line of rl) {
    if (pending === '' && line.trim().startsWith('.')) {
      if (!(await dotCommand(line.trim(), s))) break;
    } else if (pending !== '' || line.trim() !== '') {
      pending = pending === '' ? line : `${pending}\n${line}`;
      if (/;\s*$/.test(pending)) {
        running = true;
        try {
          await s.run(pending, s.format);
        } catch (e) {
          if (!isSqlError(e)) throw e;
          await s.write(`error: ${e.message}\n`);
        } finally {
          running = false;
          pending = '';
        }
      }
    }
    rl.setPrompt(pending === '' ? PROMPT : CONTINUED);
    rl.prompt();
  }
  rl.close();
  process.stdout.write('\n');
  if (!history) return;
  try {
    await writePrivateFile(file, `${[...history].reverse().join('\n')}\n`);
  } catch (e) {
    process.stderr.write(`tracepipe: could not save the prompt's history to ${file}: ${(e as Error).message}\n`);
  }
}
