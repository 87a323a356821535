/**
 * The load generator of the HTTP benchmarks (harness.ts `autocannonInWorker`), in a worker thread:
 * autocannon's own work (building requests, parsing answers, histograms) then runs beside the
 * server's event loop, not on it, as a remote client's would. Receives autocannon's options as
 * workerData and posts back its result.
 *
 * Off the main thread autocannon answers raw encoded histograms (it expects to be one of its own
 * workers); `aggregateResult`, its API for that case, turns them into the usual result but without
 * the per-second request samples, so the request rate is set here from the completed requests and
 * the run's duration.
 */
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';

// Exported by autocannon, missing from its type declarations.
const { aggregateResult } = autocannon as unknown as {
  aggregateResult: (results: unknown[], options: autocannon.Options) => autocannon.Result;
};

const options = workerData as autocannon.Options;
const result = aggregateResult([await autocannon({ ...options, skipAggregateResult: true })], options);
const rate = result.duration > 0 ? result.requests.total / result.duration : 0;
result.requests.average = rate;
result.requests.mean = rate;
parentPort?.postMessage(JSON.parse(JSON.stringify(result)) as autocannon.Result);
