/** How a handler that reads the trace store answers when the store fails it. */
import { ApiError } from '../errors.ts';
import { QueryCancelledError, TraceStoreUnavailableError } from '../store/trace-port.ts';

/** 504 when the deadline cancelled the query, 503 traces_unavailable otherwise; ApiErrors pass through. */
export function traceStoreFailure(err: unknown, signal: AbortSignal, what: string): ApiError {
  if (err instanceof QueryCancelledError || signal.aborted)
    return new ApiError('request_timeout', `the ${what} ran past the request deadline`);
  if (err instanceof ApiError) return err;
  if (err instanceof TraceStoreUnavailableError)
    return new ApiError('traces_unavailable', 'the trace store is unavailable; the rest of the service is up');
  return new ApiError('traces_unavailable', 'the trace store could not answer');
}
