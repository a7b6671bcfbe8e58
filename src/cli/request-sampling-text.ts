import type { RequestSampling } from '../analysis/request-sampling.js';

/**
 * The line `report` and `explain` print when requests were sampled: how many were kept of how many,
 * and the factor from the kept requests' counts to all requests' (from the counts the sessions wrote
 * as they stopped, else from the rate).
 */
export function requestSamplingLine(s: RequestSampling): string {
  const factor = s.requests > 0 ? (s.kept > 0 ? s.requests / s.kept : undefined) : s.rate > 0 ? 1 / s.rate : undefined;
  const head = s.requests > 0 ? `requests sampled: ${s.kept.toLocaleString('en-US')} of ${s.requests.toLocaleString('en-US')} kept (rate ${s.rate})` : `requests sampled at rate ${s.rate} (no session said how many it saw)`;
  return `${head}; counts of requests' spans are of the kept ones${factor === undefined ? '' : `, ×${factor.toFixed(2)} for all`}`;
}
