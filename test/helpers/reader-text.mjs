// Parsers for what independent readers print: protoc's text format, babeltrace2's pretty lines, CSV.
// Small on purpose: they read only the shapes those tools produce for tracepipe's output.

/** RFC 4180 CSV: quoted fields may hold commas, doubled quotes and newlines. Returns rows of strings. */
export function parseCsv(text) {
  const rows = [];
  let row = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

/** A C-style quoted string (protoc and babeltrace2 escape quotes, backslashes, controls; protoc writes bytes ≥ 0x80 as octal). */
function unquote(s, at) {
  const bytes = [];
  let i = at + 1;
  for (; s[i] !== '"'; i++) {
    if (i >= s.length) throw new Error(`unterminated string at ${at}: ${s.slice(at, at + 40)}`);
    if (s[i] !== '\\') {
      bytes.push(...Buffer.from(s[i], 'utf8'));
      continue;
    }
    const e = s[++i];
    if (/[0-7]/.test(e)) {
      bytes.push(parseInt(s.slice(i, i + 3), 8));
      i += 2;
    } else bytes.push(({ n: 10, t: 9, r: 13, '"': 34, "'": 39, '\\': 92 })[e] ?? e.charCodeAt(0));
  }
  return { value: Buffer.from(bytes).toString('utf8'), end: i + 1 };
}

/** A number as protoc prints it (inf, -inf and nan included), or undefined for an enum name. */
function number(v) {
  if (/^-?inf$/.test(v)) return v.startsWith('-') ? -Infinity : Infinity;
  if (/^-?nan$/.test(v)) return NaN;
  return /^-?[\d.]+(e[-+]?\d+)?$/.test(v) ? Number(v) : undefined;
}

const REPEATED = new Set(['packet', 'clocks', 'cmdline', 'category_iids', 'debug_annotations', 'flow_ids', 'terminating_flow_ids', 'event_categories', 'event_names', 'debug_annotation_names', 'metadata', 'source_paths', 'function_names', 'frames', 'callstacks', 'frame_ids']);

/** protoc --decode's text format into objects; repeated fields (as Perfetto declares them) are arrays. */
export function parseProtoText(text) {
  const root = {};
  const stack = [root];
  const set = (obj, name, value) => {
    if (REPEATED.has(name)) (obj[name] ??= []).push(value);
    else obj[name] = value;
  };
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    if (line === '}') {
      stack.pop();
      continue;
    }
    const open = /^(\w+) \{$/.exec(line);
    if (open) {
      const child = {};
      set(stack[stack.length - 1], open[1], child);
      stack.push(child);
      continue;
    }
    const m = /^(\w+): (.*)$/.exec(line);
    if (!m) throw new Error(`unexpected protoc line: ${line}`);
    const v = m[2];
    const value = v.startsWith('"') ? unquote(v, 0).value : /^-?\d+$/.test(v) ? (v.length > 15 ? BigInt(v) : Number(v)) : v === 'true' ? true : v === 'false' ? false : number(v) ?? v;
    set(stack[stack.length - 1], m[1], value);
  }
  return root;
}

/** One babeltrace2 value: a string, an enum (its label), an array, or a bare number as printed. */
function value(s, i) {
  if (s[i] === '"') return unquote(s, i);
  if (s[i] === '(') {
    const m = /^\( "((?:[^"\\]|\\.)*)" : container = -?\d+ \)/.exec(s.slice(i));
    return { value: m[1], end: i + m[0].length };
  }
  if (s[i] === '[') {
    const items = [];
    i += 2;
    while (s[i] !== ']') {
      const idx = /^\[\d+\] = /.exec(s.slice(i));
      const v = value(s, i + idx[0].length);
      items.push(v.value);
      i = v.end;
      if (s.startsWith(', ', i)) i += 2;
      else if (s[i] === ' ') i += 1;
    }
    return { value: items, end: i + 1 };
  }
  let end = i;
  while (end < s.length && s[end] !== ',' && s[end] !== ' ') end++;
  return { value: s.slice(i, end), end };
}

/** `name = value, …` as babeltrace2 prints a structure's members. */
function members(s) {
  const out = {};
  let i = 0;
  while (i < s.length) {
    const m = /^(\w+) = /.exec(s.slice(i));
    if (!m) throw new Error(`unexpected babeltrace2 field at ${i}: ${s.slice(i, i + 40)}`);
    const v = value(s, i + m[0].length);
    out[m[1]] = v.value;
    i = v.end;
    if (s.startsWith(', ', i)) i += 2;
  }
  return out;
}

/** A line of `babeltrace2 --clock-cycles --no-delta`: `[cycles] host Provider:Event: { context }, { fields }`. */
export function parseBabeltraceLine(line) {
  const m = /^\[(\d+)\] \S+ (\S+): \{ (.*?) \}, \{ (.*) \}$/.exec(line);
  if (!m) throw new Error(`unexpected babeltrace2 line: ${line}`);
  return { cycles: Number(m[1]), name: m[2], context: members(m[3]), fields: members(m[4]) };
}
