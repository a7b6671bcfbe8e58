/** How a session's OTLP export went: requests (and their spans, points, log records) sent and dropped. */
export interface OtlpExportStats {
  readonly requestsSent: number;
  readonly itemsSent: number;
  /** Given up: the queue was full (collector down or slow), the collector refused them, or retries ran out. */
  readonly requestsDropped: number;
  /** Spans, metrics and log records in the requests dropped (those still queued when the session ended included). */
  readonly itemsDropped: number;
  /** The spans among them: every span the session paired is either sent or dropped. */
  readonly spansSent: number;
  readonly spansDropped: number;
}

/** The counts in the order the OTLP-export block holds them (docs/FORMAT.md); new ones are only ever appended. */
export const OTLP_EXPORT_COUNTS = ['requestsSent', 'requestsDropped', 'itemsSent', 'itemsDropped', 'spansSent', 'spansDropped'] as const satisfies ReadonlyArray<keyof OtlpExportStats>;
