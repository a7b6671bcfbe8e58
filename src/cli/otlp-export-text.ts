import type { OtlpExportStats } from '../format/otlp-export-stats.js';
import { countOf } from './format-count.js';

/** "40 spans sent, 12 dropped; 3 of 9 requests dropped (52 items)": what `stats` and `report` say of a session's export. */
export function otlpExportText(o: OtlpExportStats): string {
  const requests = o.requestsSent + o.requestsDropped;
  return `${countOf(o.spansSent, 'span')} sent, ${o.spansDropped.toLocaleString('en-US')} dropped; ${o.requestsDropped.toLocaleString('en-US')} of ${countOf(requests, 'request')} dropped (${countOf(o.itemsDropped, 'item')})`;
}
