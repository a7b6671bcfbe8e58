/** A session's OTLP/HTTP export (docs/OTLP.md). */
export interface OtlpOutput {
  /** The collector's base URL, e.g. http://localhost:4318 (`/v1/traces`, `/v1/metrics`, `/v1/logs` are appended). */
  readonly endpoint: string;
  /** Sent with every request (e.g. an API key). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The resource's service.name; default `unknown_service:SCRIPT`. */
  readonly serviceName?: string;
  /** More resource attributes. */
  readonly resource?: Readonly<Record<string, string>>;
  /** OTLP/JSON bodies instead of protobuf. */
  readonly json?: boolean;
  /** Compressed requests waiting to be sent at most; past that they are dropped and counted. Default 8 MiB. */
  readonly maxQueueBytes?: number;
}

/** A bad `otlp` option (or OTLP variable, or --otlp): its message says which part and why. */
export class OtlpOutputError extends Error {
  override readonly name = 'OtlpOutputError';
}

/** What an HTTP client sends (RFC 9110): a header name is a token; a value is tabs, spaces, visible ASCII and bytes 0x80-0xFF. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Refused here, not by the sender thread's fetch later: there it would only show as every export dropped. */
function checkHeaders(headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) throw new OtlpOutputError(`otlp header name ${JSON.stringify(name)} is not an HTTP header name (letters, digits and !#$%&'*+-.^_\`|~ only)`);
    if (!HEADER_VALUE.test(value)) throw new OtlpOutputError(`otlp header ${name}'s value ${JSON.stringify(value)} holds a character HTTP forbids (a line break, NUL or other control character)`);
  }
}

const isStringRecord = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

/** The `otlp` option checked: a bad one gets a clear error before anything exists. */
export function checkOtlpOutput(o: unknown): OtlpOutput {
  if (!o || typeof o !== 'object') throw new OtlpOutputError('otlp must be an object { endpoint, headers?, serviceName?, resource? }');
  const { endpoint, headers, serviceName, resource, json, maxQueueBytes } = o as Record<string, unknown>;
  let url: URL | undefined;
  try {
    url = typeof endpoint === 'string' ? new URL(endpoint) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new OtlpOutputError(`otlp.endpoint must be an http or https URL, not ${JSON.stringify(endpoint)}`);
  if (headers !== undefined && !isStringRecord(headers)) throw new OtlpOutputError('otlp.headers must be an object of strings');
  if (headers !== undefined) checkHeaders(headers as Record<string, string>);
  if (resource !== undefined && !isStringRecord(resource)) throw new OtlpOutputError('otlp.resource must be an object of strings');
  if (serviceName !== undefined && (typeof serviceName !== 'string' || serviceName === '')) throw new OtlpOutputError('otlp.serviceName must be a non-empty string');
  if (json !== undefined && typeof json !== 'boolean') throw new OtlpOutputError('otlp.json must be a boolean');
  if (maxQueueBytes !== undefined && !(Number.isInteger(maxQueueBytes) && (maxQueueBytes as number) > 0)) throw new OtlpOutputError('otlp.maxQueueBytes must be a positive whole number of bytes');
  return {
    endpoint: endpoint as string,
    ...(headers ? { headers: headers as Record<string, string> } : {}),
    ...(serviceName ? { serviceName: serviceName as string } : {}),
    ...(resource ? { resource: resource as Record<string, string> } : {}),
    ...(json ? { json: true } : {}),
    ...(maxQueueBytes ? { maxQueueBytes: maxQueueBytes as number } : {}),
  };
}

