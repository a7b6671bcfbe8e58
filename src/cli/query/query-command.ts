import { existsSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { text } from 'node:stream/consumers';
import { loadAnalyze } from '../analyze-loader.js';
import { CliError, UsageError } from '../cli-error.js';
import { usageText } from '../command/command-help.js';
import { defineCommand, QUIET_OPTION } from '../command/command-spec.js';
import { ProgressLine } from '../progress-line.js';
import { writeErr, writeExact, writeOut } from '../output.js';
import { isQueryFormat, type QueryFormat, QUERY_FORMATS, writeResult } from './query-format.js';
import { isSqlError, type TraceDatabase } from './query-engine.js';
import { queryPrompt } from './query-prompt.js';
import { formatSchema } from './query-schema.js';

/**
 * The last argument is the SQL unless it names an existing file or a .tptrace (a missing trace
 * file is reported as missing, not as bad SQL).
 */
function splitArguments(positionals: readonly string[]): { files: string[]; sql: string | undefined } {
  const last = positionals[positionals.length - 1];
  const isFile = last === undefined || existsSync(last) || /^\S+\.tptrace$/.test(last);
  return isFile ? { files: [...positionals], sql: undefined } : { files: positionals.slice(0, -1), sql: last };
}

/** CSV has no escapes: it is written exactly, unless it is shown on a terminal (JSON escapes its control characters itself, losslessly). */
const writerFor = (format: QueryFormat): ((text: string) => Promise<void>) => (format === 'csv' && !process.stdout.isTTY ? writeExact : writeOut);

/** Runs each statement of `sql` and prints the result of each that returns rows. */
async function printStatements(db: TraceDatabase, sql: string, format: QueryFormat): Promise<void> {
  let first = true;
  for await (const result of db.query(sql)) {
    if (!first && format === 'table') await writeOut('\n');
    first = false;
    await writeResult(result, format, writerFor(format));
  }
}

export const queryCommand = defineCommand({
  name: 'query',
  summary: 'SQL over traces (DuckDB): a table per event type (docs/QUERY.md)',
  description:
    'Loads traces into DuckDB, a table per event type plus events, drops and spans, and runs SQL over them: the statements given,\n' +
    'those piped in, or a prompt on a terminal (docs/QUERY.md; needs @tracepipe/analyze).',
  positionals: [
    { name: 'FILE', variadic: true, description: 'the traces (.tptrace); their events share the tables' },
    { name: '"SQL"', optional: true, description: 'statements to run (the last argument, when it is not a file)' },
  ],
  options: {
    format: { type: 'string', value: QUERY_FORMATS.join('|'), default: 'table', description: 'how results are printed' },
    schema: { type: 'boolean', description: 'print the tables and their columns instead of running SQL' },
    ...QUIET_OPTION,
  },
  examples: [
    { args: ['app.tptrace', 'SELECT event, count(*) FROM events GROUP BY event ORDER BY 2 DESC'], does: 'events per type, most first' },
    { args: ['app.tptrace', '--schema'], does: 'the tables and their columns' },
  ],
  run: ({ values, positionals }) => query(positionals, values),
});

async function query(positionals: readonly string[], values: { format: string; schema: boolean; quiet: boolean }): Promise<number> {
  const format = values.format;
  if (!isQueryFormat(format)) throw new CliError(`--format must be one of ${QUERY_FORMATS.join(', ')}, not '${format}'`);
  const { files, sql } = splitArguments(positionals);
  if (files.length === 0) throw new UsageError('missing FILE for query (the last argument is taken as SQL)', usageText(queryCommand));
  if (values.schema && sql !== undefined) throw new CliError('give either --schema or a SQL statement, not both');
  const analyze = await loadAnalyze('tracepipe query');
  // Ctrl-C or a kill: leave through process.exit, whose handlers remove the engine's scratch database
  // (death by a signal's default action would skip them). The prompt takes Ctrl-C itself.
  const leave = (signal: NodeJS.Signals) => process.exit(128 + osConstants.signals[signal]);
  process.once('SIGINT', leave).once('SIGTERM', leave);
  const progress = new ProgressLine('loading', { quiet: values.quiet }).followTraceReads();
  let db: TraceDatabase;
  try {
    db = await analyze.openTraceDatabase(files, (p) => progress.update({ events: p.events }));
  } finally {
    progress.stop();
  }
  const damaged = db.traces.filter((t) => t.damage !== undefined);
  // The tables hold every intact event of a damaged file; the damage is said first and decides the exit code.
  for (const t of damaged) writeErr(`tracepipe: ${t.file} is damaged (${t.damage}); its tables hold the intact part\n`);
  try {
    if (values.schema) await writerFor(format)(formatSchema(await db.schema(), format));
    else if (sql !== undefined) await printStatements(db, sql, format);
    else if (process.stdin.isTTY) await queryPrompt({ db, format, run: (q, f) => printStatements(db, q, f), write: writeOut });
    else {
      // Statements piped in: read to the end of input, then run.
      const piped = await text(process.stdin);
      if (piped.trim() === '') throw new UsageError('no SQL: give a statement, pipe statements in, or run on a terminal for a prompt', usageText(queryCommand));
      await printStatements(db, piped, format);
    }
  } catch (e) {
    if (isSqlError(e)) throw new CliError(e.message, 1);
    throw e;
  } finally {
    await db.close();
    process.off('SIGINT', leave).off('SIGTERM', leave);
  }
  if (damaged.length > 0) throw new CliError(`${damaged.length} of ${files.length} trace file${files.length === 1 ? ' is' : 's are'} damaged (see above)`, 1);
  return 0;
}
