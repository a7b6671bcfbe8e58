import { basename } from 'node:path';
import { listTargets } from '../ipc/diagnostics-client.js';
import { defineCommand, JSON_OPTION } from './command/command-spec.js';
import type { SessionInfo } from '../ipc/ipc-commands.js';
import { countOf } from './format-count.js';
import { formatBytes } from './format-size.js';
import { stringify } from './json-value.js';
import { writeOut } from './output.js';
import { printable } from './printable.js';

export const psCommand = defineCommand({
  name: 'ps',
  summary: 'attachable processes: pid, tracepipe version, sessions (flight recorders marked), command line',
  positionals: [],
  options: { ...JSON_OPTION },
  examples: [{ args: [], does: 'the processes that collect, stop, recorder and gcdump can attach to' }],
  run: ({ values }) => ps(values.json),
});

async function ps(json: boolean): Promise<number> {
  const targets = await listTargets();
  if (json) {
    await writeOut(`${stringify(targets.map((t) => ({ pid: t.endpoint.pid, endpoint: t.endpoint.path, ...(t.info ? { info: t.info } : { error: t.error }) })), 2)}\n`);
    return 0;
  }
  if (targets.length === 0) {
    await writeOut('no attachable processes (start one with: node --import tracepipe/register app.js)\n');
    return 0;
  }
  const rows = targets.map((t) => {
    const i = t.info;
    if (!i) return [String(t.endpoint.pid), '?', '?', `(not answering: ${t.error})`];
    // A ring session is a flight recorder: `tracepipe recorder dump --pid N` writes it out.
    // A recorder says what it keeps: its ring's size and the events of a typical size that fill it.
    const recorder = (s: SessionInfo): string => (s.buffer ? ` recorder ${formatBytes(s.buffer.bytes)} ≈ ${countOf(s.buffer.events, 'event')} of ${s.buffer.eventBytes} B` : ' recorder');
    // An OTLP export says what it sent and, above all, what it dropped (a collector down or slow).
    const otlp = (s: SessionInfo): string => (s.otlp ? ` otlp ${countOf(s.otlp.sent, 'item')} sent, ${countOf(s.otlp.dropped, 'item')} dropped` : '');
    const sessions = i.sessions.length === 0 ? '0' : `${i.sessions.length} (${i.sessions.map((s) => `#${s.id}${s.bufferingMode === 'ring' ? recorder(s) : ''}${otlp(s)}`).join(', ')})`;
    return [String(i.pid), i.tracepipeVersion, sessions, [basename(i.argv[0] ?? i.title), ...i.argv.slice(1)].join(' ')];
  }).map((r) => r.map(printable));
  const header = ['PID', 'TRACEPIPE', 'SESSIONS', 'COMMAND'];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const line = (r: string[]): string => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ');
  await writeOut(`${[header, ...rows].map(line).join('\n')}\n`);
  return 0;
}
