/**
 * What the built-in providers and the API's spans need only once a session runs, loaded with the
 * session machinery (src/machinery.ts).
 */
// Spans read a promise's outcome with the native addon, when it was built (a span writes only while a session runs).
import './promise-state.js';
