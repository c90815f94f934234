import { capHolds, newChatHold, newChatWaitMs, NEW_CHAT_RECHECK_MS, type NewChatLimits } from './new-chat-limits.js';

const now = new Date('2030-01-16T03:00:00Z');
const later = (ms: number) => new Date(now.getTime() + ms);
const none: NewChatLimits = { refusedAt: null, reachoutLock: null, cap: null };
const cap = (status: string, used: number | null, total: number | null, endsInMs: number | null) => ({
  status,
  used,
  total,
  cycleEndsAt: endsInMs === null ? null : later(endsInMs),
  toldAt: now,
});

test('nothing told, or a lock and a cap that ended, hold nothing', () => {
  expect(newChatHold(null, now)).toBeNull();
  expect(newChatHold(none, now)).toBeNull();
  expect(newChatHold({ ...none, reachoutLock: { until: later(0), type: 'DEFAULT' }, cap: cap('CAPPED', 5, 5, -1) }, now)).toBeNull();
});

test('the cap holds while CAPPED or its quota is used, until its cycle ends; warnings hold nothing', () => {
  expect(capHolds(cap('CAPPED', null, null, 1_000), now)).toBe(true);
  expect(capHolds(cap('SECOND_WARNING', 20, 20, 1_000), now)).toBe(true);
  expect(capHolds(cap('SECOND_WARNING', 19, 20, 1_000), now)).toBe(false);
  expect(capHolds(cap('CAPPED', 20, 20, null), now)).toBe(false);
  expect(newChatHold({ ...none, cap: cap('CAPPED', 20, 20, 3_600_000) }, now)).toMatchObject({ code: 'new_chat_cap', until: later(3_600_000) });
});

test('of several, the one that lasts longest: a 463 (no end) over a lock, a later cap over an earlier lock', () => {
  const lock = { until: later(60_000), type: 'BIZ_QUALITY' };
  expect(newChatHold({ ...none, refusedAt: now, reachoutLock: lock }, now)).toMatchObject({ code: 'new_chats_refused', until: null });
  expect(newChatHold({ ...none, reachoutLock: lock, cap: cap('CAPPED', 1, 1, 120_000) }, now)).toMatchObject({ code: 'new_chat_cap', until: later(120_000) });
  expect(newChatHold({ ...none, reachoutLock: lock, cap: cap('CAPPED', 1, 1, 30_000) }, now)).toMatchObject({
    code: 'reachout_time_lock',
    until: later(60_000),
  });
});

test('a held new chat waits until the end, or is looked at again after a while when there is none', () => {
  expect(newChatWaitMs({ code: 'reachout_time_lock', until: later(90_000), words: '' }, now)).toBe(90_000);
  expect(newChatWaitMs({ code: 'new_chats_refused', until: null, words: '' }, now)).toBe(NEW_CHAT_RECHECK_MS);
});
