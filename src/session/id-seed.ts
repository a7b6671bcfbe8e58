let seed: string | undefined;

/** 32 bits of Math.random(), mixed with `salt` so two processes given the same --random-seed still differ. */
function word(salt: number): string {
  const r = Math.floor(Math.random() * 2 ** 32);
  // One round of a 32-bit finaliser (murmur3's): every bit of the salt reaches every bit of the word.
  let x = (r ^ salt) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return ((x ^ (x >>> 16)) >>> 0).toString(16).padStart(8, '0');
}

/**
 * This process's id seed, written in every session's header: OTLP's trace and span ids are derived
 * from it and the trace's span ids (otlp/otlp-ids.ts), so they are unique across processes and
 * the same in every session of the process, in the file and on the wire. It needs to be unique, not
 * secret (OpenTelemetry's own id generator draws from Math.random too): V8 seeds each isolate's
 * Math.random from Node's entropy source, and the pid and the clock are mixed in. Not node:crypto:
 * loading it compiles ~15 of Node's modules (7–13 ms, ~400 KB of garbage) before a session's first event.
 */
export function processIdSeed(): string {
  if (seed === undefined) {
    const ns = process.hrtime.bigint();
    seed = word(process.pid ^ Number(ns & 0xffffffffn)) + word(Number((ns >> 32n) & 0xffffffffn) ^ (Date.now() % 2 ** 32));
  }
  return seed;
}
