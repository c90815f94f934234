import { ManualClock } from '@metronome/core';
import { createLogger } from '@metronome/observability';
import { loadConfig } from './config.js';
import { cleanupSentMessages } from './resend-cleanup.js';

const DAY = 86_400_000;

test('WHATSAPP_RESEND_DAYS: 7 by default, 1 to 90, a bad value named', () => {
  expect(loadConfig({ NODE_ENV: 'development' }).WHATSAPP_RESEND_DAYS).toBe(7);
  expect(loadConfig({ NODE_ENV: 'development', WHATSAPP_RESEND_DAYS: '30' }).WHATSAPP_RESEND_DAYS).toBe(30);
  for (const bad of ['0', '91', 'week']) expect(() => loadConfig({ NODE_ENV: 'development', WHATSAPP_RESEND_DAYS: bad })).toThrow(/WHATSAPP_RESEND_DAYS/);
});

test('the cleanup deletes what was sent before the kept days, batch after batch until a short one', async () => {
  const clock = new ManualClock(100 * DAY);
  const calls: { before: number; limit: number }[] = [];
  const left = [3, 3, 1];
  const repo = {
    deleteSentBefore: async (before: Date, limit: number) => {
      calls.push({ before: before.getTime(), limit });
      return left.shift() ?? 0;
    },
  };
  expect(await cleanupSentMessages({ repo, clock, logger: createLogger('cleanup-test', 'silent'), keepMs: 7 * DAY, batch: 3 })).toBe(7);
  expect(calls).toEqual([
    { before: 93 * DAY, limit: 3 },
    { before: 93 * DAY, limit: 3 },
    { before: 93 * DAY, limit: 3 },
  ]);
});
