/** Worker entry of the demo's sample app: handles simulated requests, reports how many. */
import { parentPort, workerData } from 'node:worker_threads';
import { simulateRequests } from '../demo/sample-work.js';

const { durationMs, seed } = workerData as { durationMs: number; seed: number };
parentPort!.postMessage(await simulateRequests(durationMs, seed));
