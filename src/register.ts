/**
 * `node --import tracepipe/register app.js`: makes the process attachable (the diagnostics server) and
 * starts the startup session when TRACEPIPE_ENABLE=1 and a flight recorder when TRACEPIPE_FLIGHT_RECORDER
 * is set. Problems are one line on stderr; the application
 * runs regardless. Only the main thread does anything (worker threads inherit --import).
 */
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  // Through the public entry, which defines the built-in providers: sessions naming them then get their events.
  const { startDiagnosticServer } = await import('./index.js');
  const { startStartupSession } = await import('./ipc/startup-session.js');
  const warn = (what: string, e: unknown): boolean => process.stderr.write(`tracepipe: ${what}: ${(e as Error)?.message ?? String(e)}\n`);
  await startDiagnosticServer().catch((e: unknown) => warn('diagnostics server not started', e));
  await startStartupSession().catch((e: unknown) => warn('startup session not started', e));
  const { startFlightRecorderFromEnv } = await import('./api/flight-recorder.js');
  await startFlightRecorderFromEnv().catch((e: unknown) => warn('flight recorder not started', e));
}
