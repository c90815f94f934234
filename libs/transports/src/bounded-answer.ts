import type { SendFailure } from '@metronome/core';

/** 64 KiB (CONTRACT §5): every defined answer is a few hundred bytes, and a larger one must not make a sender buffer it. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export const ANSWER_TOO_LARGE = 'answer_too_large';

/**
 * Its body unread, the status decides: 2xx `ambiguous` (taken, but how is unknown), 401 `account-unavailable`, 408/429/5xx
 * `retriable` (a 429's wait cannot be read), others `rejected`.
 */
export function classifyOversizedAnswer(status: number, what: string): SendFailure {
  const message = `${what} answered ${status} with more than ${MAX_ANSWER_BYTES} bytes: not read`;
  const code = ANSWER_TOO_LARGE;
  if (status >= 200 && status < 300) return { kind: 'ambiguous', code, message };
  if (status === 401) return { kind: 'account-unavailable', code, message };
  if (status === 408 || status === 429 || status >= 500) return { kind: 'retriable', code, message };
  return { kind: 'rejected', code, message };
}
