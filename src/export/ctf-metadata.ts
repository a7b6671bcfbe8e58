import type { TraceHeader } from '../format/stream-header.js';
import type { FieldType } from '../schema/field-type.js';
import { Level } from '../schema/level.js';
import type { FieldLayout } from '../schema/payload-layout.js';

/** Packet header + context, in bytes: magic, stream id, stream instance (thread) id; begin, end, sizes, sequence number, events discarded, thread id. */
export const PACKET_PREAMBLE = 4 + 4 + 8 + 8 * 6 + 4;
export const CTF_MAGIC = 0xc1fc1fc1;

export interface CtfField {
  readonly field: FieldLayout;
  /** TSDL identifier: `_` + the name with other characters as `_` (readers drop the leading `_`). */
  readonly ident: string;
  /** The length field that precedes a `bytes` sequence. */
  readonly lengthIdent?: string;
}

export interface CtfEventClass {
  readonly id: number;
  /** "Provider:Event", as LTTng names tracepoints. */
  readonly name: string;
  readonly level: Level;
  /** In declaration order, as they are written. */
  readonly fields: readonly CtfField[];
}

export function ctfFields(fields: readonly FieldLayout[]): CtfField[] {
  const taken = new Set<string>();
  const unique = (base: string): string => {
    let id = base;
    while (taken.has(id)) id += '_';
    taken.add(id);
    return id;
  };
  return fields.map((field) => {
    const ident = unique(`_${field.name.replace(/[^A-Za-z0-9_]/g, '_')}`);
    return field.type === 'bytes' ? { field, ident, lengthIdent: unique(`${ident}_length`) } : { field, ident };
  });
}

const int = (bits: number, signed: boolean): string => `integer { size = ${bits}; align = 8; signed = ${signed}; }`;

function fieldClass(type: FieldType): string {
  switch (type) {
    case 'bool': return `enum : ${int(8, false)} { "false" = 0, "true" = 1 }`;
    case 'u8': return int(8, false);
    case 'i8': return int(8, true);
    case 'u16': return int(16, false);
    case 'i16': return int(16, true);
    case 'u32': return int(32, false);
    case 'i32': return int(32, true);
    case 'u64': return int(64, false);
    case 'i64': return int(64, true);
    case 'f32': return 'floating_point { exp_dig = 8; mant_dig = 24; byte_order = le; align = 8; }';
    case 'f64': return 'floating_point { exp_dig = 11; mant_dig = 53; byte_order = le; align = 8; }';
    case 'string': return 'string { encoding = UTF8; }';
    case 'bytes': return int(8, false);
  }
}

/** babeltrace2's log levels (syslog's, then LTTng's debug levels); LogAlways has none. */
const LOG_LEVEL: Record<number, number | undefined> = { [Level.Critical]: 2, [Level.Error]: 3, [Level.Warning]: 4, [Level.Informational]: 6, [Level.Verbose]: 14 };

const tsdlString = (s: string): string => `"${s.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n').replace(/\r/g, '\\r')}"`;

/**
 * The TSDL `metadata` of a CTF 1.8 trace: little endian, byte-aligned types (no padding), one stream
 * class whose files are the threads (stream instance id = thread id), events with a 32-bit id and a
 * 64-bit timestamp on a 1 GHz clock whose offset is the header's wall clock at the trace origin.
 */
export function ctfMetadata(h: TraceHeader, classes: readonly CtfEventClass[], threadNames: ReadonlyArray<readonly [number, string]>): string {
  const wall = BigInt(h.clock.wallClockNs);
  const env: Array<[string, string | number]> = [
    ['domain', 'tracepipe'],
    ['tracer_name', 'tracepipe'],
    ['tracer_version', h.tracepipeVersion],
    ['hostname', h.hostname],
    ['pid', h.pid],
    ['process', h.argv.join(' ') || h.processTitle],
    ['node_version', h.nodeVersion],
    ['session_providers', h.session.providers],
    ['buffering_mode', h.session.bufferingMode],
    ...threadNames.map(([id, name]): [string, string] => [`thread_${id}`, name]),
  ];
  const events = classes.map((c) => {
    const fields = c.fields.flatMap((f) =>
      f.lengthIdent ? [`${int(32, false)} ${f.lengthIdent};`, `${fieldClass('bytes')} ${f.ident}[${f.lengthIdent}];`] : [`${fieldClass(f.field.type)} ${f.ident};`],
    );
    const level = LOG_LEVEL[c.level];
    return `event {
\tname = ${tsdlString(c.name)};
\tid = ${c.id};
\tstream_id = 0;${level === undefined ? '' : `\n\tloglevel = ${level};`}
\tfields := struct {${fields.map((f) => `\n\t\t${f}`).join('')}
\t};
};
`;
  });
  return `/* CTF 1.8 */

trace {
\tmajor = 1;
\tminor = 8;
\tbyte_order = le;
\tpacket.header := struct {
\t\t${int(32, false)} magic;
\t\t${int(32, false)} stream_id;
\t\t${int(64, false)} stream_instance_id;
\t};
};

env {
${env.map(([k, v]) => `\t${k} = ${typeof v === 'number' ? v : tsdlString(v)};`).join('\n')}
};

clock {
\tname = monotonic;
\tdescription = "process monotonic clock (ns since the trace origin); the offset is the wall clock at the origin";
\tfreq = 1000000000;
\tprecision = 1;
\toffset_s = ${wall / 1_000_000_000n};
\toffset = ${wall % 1_000_000_000n};
\tabsolute = TRUE;
};

typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := tracepipe_clock_t;

stream {
\tid = 0;
\tevent.header := struct {
\t\t${int(32, false)} id;
\t\ttracepipe_clock_t timestamp;
\t};
\tpacket.context := struct {
\t\ttracepipe_clock_t timestamp_begin;
\t\ttracepipe_clock_t timestamp_end;
\t\t${int(64, false)} content_size;
\t\t${int(64, false)} packet_size;
\t\t${int(64, false)} packet_seq_num;
\t\t${int(64, false)} events_discarded;
\t\t${int(32, false)} thread_id;
\t};
};

${events.join('\n')}`;
}
