import { DEFAULT_WEBHOOK_RETRY, webhookAttemptOutcome } from './webhook-retry.js';

test('a 2xx delivers; a failure retries with a growing delay inside 24 h, then fails for good', () => {
  const from = 1_000_000;
  expect(webhookAttemptOutcome(true, 1, from, from)).toEqual({ status: 'delivered' });
  const half = () => 0;
  expect(webhookAttemptOutcome(false, 1, from, from, DEFAULT_WEBHOOK_RETRY, half)).toEqual({ status: 'pending', nextAttemptAt: from + 2_500 });
  expect(webhookAttemptOutcome(false, 3, from, from, DEFAULT_WEBHOOK_RETRY, half)).toEqual({ status: 'pending', nextAttemptAt: from + 10_000 });
  // capped at an hour apart
  expect(webhookAttemptOutcome(false, 30, from, from, DEFAULT_WEBHOOK_RETRY, () => 1)).toEqual({ status: 'pending', nextAttemptAt: from + 3_600_000 });
  const late = from + 24 * 3_600_000 - 1_000;
  expect(webhookAttemptOutcome(false, 40, from, late, DEFAULT_WEBHOOK_RETRY, half)).toEqual({ status: 'failed' });
});
