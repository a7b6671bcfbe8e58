/** Why a session did not start or failed; its own module so that `import 'tracepipe'` has it without the sessions. */
export class SessionError extends Error {
  override readonly name = 'SessionError';
}

/** The process already runs as many sessions as it allows (TRACEPIPE_MAX_SESSIONS). */
export class SessionLimitError extends SessionError {}
