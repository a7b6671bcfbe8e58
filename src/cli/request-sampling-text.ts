import type { RequestSampling } from '../analysis/request-sampling.js';
import { formatRate } from './format-count.js';

/**
 * The line `report` and `explain` print when requests were sampled: how many were kept of how many
 * and at what rate per second over the trace's `wallNs`, and the factor from the kept requests'
 * counts to the estimate for all requests (from the counts the sessions wrote as they stopped, else
 * from the rate). Durations need no scaling: sampling does not choose requests by how long they take.
 */
export function requestSamplingLine(s: RequestSampling, wallNs: number): string {
  const perSecond = (n: number) => formatRate(wallNs > 0 ? n / (wallNs / 1e9) : 0, 'requests/s');
  const head = s.requests > 0
    ? `requests sampled: ${s.kept.toLocaleString('en-US')} of ${s.requests.toLocaleString('en-US')} kept (rate ${s.rate}; ${perSecond(s.kept)} kept, ${perSecond(s.requests)} in all)`
    : `requests sampled at rate ${s.rate} (no session said how many it saw)`;
  const scale = s.factor === null ? '' : `, ×${s.factor.toFixed(2)} for all: the "est." figures are those estimates`;
  return `${head}; counts of requests' spans are of the kept ones${scale}; durations as observed`;
}
