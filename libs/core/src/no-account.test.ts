import { decideHeld, noAccountPauseReason } from './no-account.js';
import { occurrencesDue, type Schedule } from './schedule.js';

const T0 = new Date('2026-06-01T09:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const every60: Schedule = { type: 'interval', everySeconds: 60 };

describe('occurrencesDue', () => {
  const cases: [string, Schedule, number, number][] = [
    ['not yet due', every60, -1, 0],
    ['just due', every60, 0, 1],
    ['before the next one', every60, 59_999, 1],
    ['the next one passed', every60, 60_000, 2],
    ['ten minutes held', every60, 600_000, 11],
    ['once: one, however late', { type: 'once', at: T0.toISOString() }, 3_600_000, 1],
    ['cron every 15 min, 1 h held', { type: 'cron', expression: '*/15 * * * *' }, 3_600_000, 5],
  ];
  test.each(cases)('%s', (_name, schedule, elapsed, expected) => {
    expect(occurrencesDue(schedule, 'UTC', T0, at(elapsed))).toBe(expected);
  });
});

describe('decideHeld', () => {
  const held = (streak: number) => ({ schedule: every60, timezone: 'UTC', dueAt: T0, streak });
  test('the first check counts the held occurrence', () => expect(decideHeld(held(0), at(0), 0)).toEqual({ kind: 'count', streak: 1 }));
  test('re-checks of the same occurrence change nothing', () => expect(decideHeld(held(1), at(30_000), 3)).toEqual({ kind: 'same' }));
  test('0 never pauses', () => expect(decideHeld(held(1), at(3_600_000), 0)).toEqual({ kind: 'count', streak: 61 }));
  test('the N-th consecutive occurrence pauses', () => expect(decideHeld(held(2), at(120_000), 3)).toEqual({ kind: 'pause', streak: 3 }));
  test('the reason names the account state', () => {
    expect(noAccountPauseReason(3, 'disconnected', null)).toMatch(/^no_account: 3 occurrences in a row .* account is disconnected/);
    expect(noAccountPauseReason(3, 'active', new Date('2026-06-02T00:00:00Z'))).toMatch(/blocked until 2026-06-02T00:00:00.000Z/);
  });
});
