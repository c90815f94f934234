import { retryDelayMs } from './backoff.js';

export const WEBHOOK_RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface WebhookRetryPolicy {
  /** the first retry's delay, doubled each attempt, with jitter */
  baseMs: number;
  maxMs: number;
  windowMs: number;
}

export const DEFAULT_WEBHOOK_RETRY: WebhookRetryPolicy = { baseMs: 5_000, maxMs: 3_600_000, windowMs: WEBHOOK_RETRY_WINDOW_MS };

export type WebhookAttemptOutcome = { status: 'delivered' } | { status: 'pending'; nextAttemptAt: number } | { status: 'failed' };

/** What follows attempt `attempt` (1-based) of a delivery first tried at `retryFrom`: delivered on 2xx, else a retry within the window, else failed. */
export function webhookAttemptOutcome(
  ok: boolean,
  attempt: number,
  retryFrom: number,
  now: number,
  policy: WebhookRetryPolicy = DEFAULT_WEBHOOK_RETRY,
  random: () => number = Math.random,
): WebhookAttemptOutcome {
  if (ok) return { status: 'delivered' };
  const next = now + retryDelayMs(attempt, random, policy.baseMs, policy.maxMs);
  if (next - retryFrom > policy.windowMs) return { status: 'failed' };
  return { status: 'pending', nextAttemptAt: next };
}
