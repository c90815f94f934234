import type { SendFailure } from '@metronome/core';

/**
 * The most of a platform's answer a transport reads: 64 KiB (CONTRACT §5). Every answer the
 * protocols define is a few hundred bytes; a platform (or something posing as one) that answers
 * more must not make a sender buffer it, whatever its size. postOnce reads no further: a longer
 * answer is cut off where it crosses the limit (or at once, when its Content-Length says so).
 */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** The code of a send whose answer was over MAX_ANSWER_BYTES. */
export const ANSWER_TOO_LARGE = 'answer_too_large';

/**
 * What an answer over the limit means. Its body is not read, so its status alone decides, with
 * code `answer_too_large`. The request was written and answered, so:
 * - 2xx: `ambiguous` (the target becomes `unknown`): the platform says it took the message, but
 *   its answer cannot be read, so whether and how is not known; never re-sent automatically;
 * - 401: `account-unavailable`, as any 401;
 * - 408, 429 and 5xx: `retriable` (not delivered; the wait a 429 names cannot be read, so backoff);
 * - any other status: `rejected` (the platform refused the request).
 */
export function classifyOversizedAnswer(status: number, what: string): SendFailure {
  const message = `${what} answered ${status} with more than ${MAX_ANSWER_BYTES} bytes: not read`;
  const code = ANSWER_TOO_LARGE;
  if (status >= 200 && status < 300) return { kind: 'ambiguous', code, message };
  if (status === 401) return { kind: 'account-unavailable', code, message };
  if (status === 408 || status === 429 || status >= 500) return { kind: 'retriable', code, message };
  return { kind: 'rejected', code, message };
}
