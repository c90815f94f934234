import { DEFAULT_COOLING } from '@metronome/core';
import { loadConfig } from './config.js';
import { senderSettings } from './build-deps.js';

// The settings a sender job runs with come from the environment through senderSettings alone.

test('each job setting is the variable that names it, with the documented defaults', () => {
  const settings = senderSettings(loadConfig({ NODE_ENV: 'development' }));
  expect(settings).toEqual({
    sendsPerJob: 20,
    defaultMaxSendPerMinute: 40,
    defaultGroupConcurrency: 3,
    rateBurst: 1,
    maxRetries: 5,
    sendTimeoutMs: 15_000,
    maxInlineWaitMs: 250,
    maxGateWaitMs: 1_000,
    lockRetryMs: 500,
    lockTtlMs: 15_000,
    chatPacePerMinute: { telegram: 20, telegram_user: 20, whatsapp: 0, http: 0 },
    partJitterMs: 200,
    cooling: DEFAULT_COOLING,
  });
});

test('a set variable reaches its setting', () => {
  const settings = senderSettings(
    loadConfig({
      NODE_ENV: 'development',
      SENDS_PER_JOB: '7',
      DEFAULT_MAX_SEND_PER_MINUTE: '90',
      DEFAULT_GROUP_CONCURRENCY: '4',
      RATE_BURST: '2',
      MAX_RETRIES: '9',
      SEND_TIMEOUT_MS: '1234',
      SENDER_MAX_INLINE_WAIT_MS: '99',
      SENDER_MAX_GATE_WAIT_MS: '98',
      SENDER_LOCK_RETRY_MS: '321',
      SENDER_HOLD_MS: '4567',
      CHAT_MAX_SEND_PER_MINUTE_TELEGRAM: '11',
      CHAT_MAX_SEND_PER_MINUTE_WHATSAPP: '12',
      CHAT_MAX_SEND_PER_MINUTE_HTTP: '13',
      PART_JITTER_MS: '77',
    }),
  );
  expect(settings).toMatchObject({
    sendsPerJob: 7,
    defaultMaxSendPerMinute: 90,
    defaultGroupConcurrency: 4,
    rateBurst: 2,
    maxRetries: 9,
    sendTimeoutMs: 1234,
    maxInlineWaitMs: 99,
    maxGateWaitMs: 98,
    lockRetryMs: 321,
    lockTtlMs: 4567,
    chatPacePerMinute: { telegram: 11, telegram_user: 11, whatsapp: 12, http: 13 },
    partJitterMs: 77,
  });
});
