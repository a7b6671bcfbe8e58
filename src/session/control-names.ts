/** Where the main thread announces sessions to worker threads (control-channel.ts); a worker watches them before it loads sessions. */
export const CONTROL_CHANNEL = 'tracepipe:sessions';
export const SESSIONS_ENV_KEY = 'tracepipe:sessions';
