/**
 * What a terminal acts on instead of showing: the C0 controls (ESC starts an escape sequence, CR
 * rewrites the line, BEL rings), DEL, the C1 controls (U+009B alone is a CSI), and the bidirectional
 * overrides and isolates, which reorder the text shown around them (U+202A–U+202E, U+2066–U+2069).
 * Names and values in a trace, a heap dump or another process's argv are anybody's: they reach a
 * terminal only through these functions.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
const CONTROL_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** The same without the global flag, to test with first: a replace with a function costs a few times a test even when nothing matches, and most text has nothing to escape. */
const HAS_CONTROL = new RegExp(CONTROL.source);
const HAS_CONTROL_BUT_NEWLINE = new RegExp(CONTROL_BUT_NEWLINE.source);

/** `\n`, `\r`, `\t` as such, anything else as `\u001b`: a JSON string's own spelling, so JSON text stays valid and lossless. */
function escape(c: string): string {
  if (c === '\n') return '\\n';
  if (c === '\r') return '\\r';
  if (c === '\t') return '\\t';
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** A name or value shown within a line: every control character escaped, line breaks too. */
export function printable(s: string): string {
  return HAS_CONTROL.test(s) ? s.replace(CONTROL, escape) : s;
}

/** A whole output of lines: as printable, but its line breaks kept. */
export function printableText(s: string): string {
  return HAS_CONTROL_BUT_NEWLINE.test(s) ? s.replace(CONTROL_BUT_NEWLINE, escape) : s;
}
