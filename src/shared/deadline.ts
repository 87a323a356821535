/**
 * A request's deadline (DESIGN §7, §12): the signal aborts at `at`, cancelling store work, and
 * synchronous work checks `at` between its steps, because a timer cannot interrupt it.
 */
import { ApiError } from '../errors.ts';

export interface Deadline {
  /** Aborted when the deadline passes. */
  readonly signal: AbortSignal;
  /** Epoch milliseconds at which the request's time is up. */
  readonly at: number;
  readonly timeoutMs: number;
  /**
   * Said when the request's write begins: from then on the deadline no longer answers 504 by
   * itself (its signal still aborts, withdrawing whatever part of the write has not begun), and the
   * request answers with the write's outcome, so that an answer never reports an error for data
   * that was stored (DESIGN §12).
   */
  answerAfterWrite(): void;
}

export function timeoutError(timeoutMs: number): ApiError {
  return new ApiError('request_timeout', `the request took longer than ${timeoutMs} ms`);
}

/** Throws 504 request_timeout once the deadline has passed (aborted, or its time is up). */
export function checkDeadline(deadline: Deadline): void {
  if (deadline.signal.aborted || Date.now() >= deadline.at) throw timeoutError(deadline.timeoutMs);
}
