/** Worker entry of `tracepipe convert`: runs one conversion and reports to the CLI's thread. */
import { parentPort, workerData } from 'node:worker_threads';
import { type ConvertJob, runConvertJob } from '../cli/convert/convert-job.js';

await runConvertJob(workerData as ConvertJob, (m) => parentPort!.postMessage(m));
