import { firstOccurrence, nextOccurrence, rescheduledOccurrence } from './schedule.js';
import { planOccurrence } from './occurrence-plan.js';

const d = (s: string) => new Date(s);

describe('firstOccurrence', () => {
  test('interval without startAt is due now', () => {
    expect(firstOccurrence({ type: 'interval', everySeconds: 300 }, 'UTC', d('2026-01-01T00:00:10Z'))).toEqual(d('2026-01-01T00:00:10Z'));
  });
  test('interval with a future startAt waits for it', () => {
    expect(firstOccurrence({ type: 'interval', everySeconds: 300, startAt: '2026-01-02T00:00:00Z' }, 'UTC', d('2026-01-01T00:00:00Z'))).toEqual(
      d('2026-01-02T00:00:00Z'),
    );
  });
  test('interval with a past startAt keeps its grid', () => {
    expect(firstOccurrence({ type: 'interval', everySeconds: 300, startAt: '2026-01-01T00:00:00Z' }, 'UTC', d('2026-01-01T00:07:00Z'))).toEqual(
      d('2026-01-01T00:10:00Z'),
    );
  });
  test('cron in the campaign timezone', () => {
    // 09:00 in Kuala Lumpur is 01:00 UTC
    expect(firstOccurrence({ type: 'cron', expression: '0 9 * * *' }, 'Asia/Kuala_Lumpur', d('2026-01-01T02:00:00Z'))).toEqual(d('2026-01-02T01:00:00Z'));
  });
  test('once', () => {
    expect(firstOccurrence({ type: 'once', at: '2026-05-01T10:00:00Z' }, 'UTC', d('2026-01-01T00:00:00Z'))).toEqual(d('2026-05-01T10:00:00Z'));
  });
});

describe('nextOccurrence', () => {
  test('interval: previous + every when on time', () => {
    expect(nextOccurrence({ type: 'interval', everySeconds: 60 }, 'UTC', d('2026-01-01T00:00:00Z'), d('2026-01-01T00:00:01Z'))).toEqual({
      at: d('2026-01-01T00:01:00Z'),
      coalesced: 0,
    });
  });
  test('interval: missed occurrences coalesce into the latest one', () => {
    expect(nextOccurrence({ type: 'interval', everySeconds: 60 }, 'UTC', d('2026-01-01T00:00:00Z'), d('2026-01-01T00:05:30Z'))).toEqual({
      at: d('2026-01-01T00:05:00Z'),
      coalesced: 4,
    });
  });
  test('cron: coalesces past matches', () => {
    expect(nextOccurrence({ type: 'cron', expression: '*/5 * * * *' }, 'UTC', d('2026-01-01T00:00:00Z'), d('2026-01-01T00:17:00Z'))).toEqual({
      at: d('2026-01-01T00:15:00Z'),
      coalesced: 2,
    });
  });
  test('once has no next', () => {
    expect(nextOccurrence({ type: 'once', at: '2026-01-01T00:00:00Z' }, 'UTC', d('2026-01-01T00:00:00Z'), d('2026-01-01T00:00:00Z')).at).toBeNull();
  });
});

describe('planOccurrence', () => {
  const base = { campaignId: '7d1c1f8e-0000-4000-8000-000000000001', schedule: { type: 'interval' as const, everySeconds: 60 }, timezone: 'UTC' };
  test('inside the window: a run at the due time, never earlier', () => {
    const plan = planOccurrence({ ...base, window: { start: '00:00', end: '24:00' }, dueAt: d('2026-01-01T10:00:00Z') }, d('2026-01-01T10:00:00.300Z'), 0);
    expect(plan).toMatchObject({ kind: 'run', scheduledAt: d('2026-01-01T10:00:00Z'), windowEndAt: null, next: d('2026-01-01T10:01:00Z'), coalesced: 0 });
  });
  test('outside the window: moves to the next opening without a run', () => {
    const plan = planOccurrence({ ...base, window: { start: '09:00', end: '17:00' }, dueAt: d('2026-01-01T18:00:00Z') }, d('2026-01-01T18:00:00Z'), 0);
    expect(plan).toMatchObject({ kind: 'wait-for-window', next: d('2026-01-02T09:00:00Z') });
  });
  test('jitter only delays, deterministically', () => {
    const o = { ...base, window: { start: '00:00', end: '24:00' }, dueAt: d('2026-01-01T10:00:00Z') };
    const a = planOccurrence(o, d('2026-01-01T10:00:00Z'), 5000);
    const b = planOccurrence(o, d('2026-01-01T10:00:00Z'), 5000);
    expect(a).toEqual(b);
    if (a.kind !== 'run') throw new Error('expected a run');
    expect(a.scheduledAt.getTime()).toBeGreaterThanOrEqual(o.dueAt.getTime());
    expect(a.scheduledAt.getTime()).toBeLessThan(o.dueAt.getTime() + 5000);
    // a jitter stuck at 0 passes the checks above: the same occurrence of other campaigns must
    // land at different delays
    const delays = Array.from({ length: 20 }, (_, i) => {
      const plan = planOccurrence({ ...o, campaignId: `7d1c1f8e-0000-4000-8000-${String(i).padStart(12, '0')}` }, o.dueAt, 5000);
      return plan.kind === 'run' ? plan.scheduledAt.getTime() - o.dueAt.getTime() : -1;
    });
    expect(new Set(delays).size).toBeGreaterThan(10);
    expect(Math.max(...delays)).toBeGreaterThan(2_500);
  });
});

describe('rescheduledOccurrence', () => {
  const every = { type: 'interval' as const, everySeconds: 300 };
  test('an edited interval campaign that just ran waits out its interval', () => {
    expect(rescheduledOccurrence(every, 'UTC', d('2026-01-01T10:01:00Z'), d('2026-01-01T10:00:00Z'))).toEqual(d('2026-01-01T10:05:00Z'));
  });
  test('long after its last run, it is due now', () => {
    expect(rescheduledOccurrence(every, 'UTC', d('2026-01-01T11:00:00Z'), d('2026-01-01T10:00:00Z'))).toEqual(d('2026-01-01T11:00:00Z'));
  });
  test('never run: same as the first occurrence', () => {
    expect(rescheduledOccurrence(every, 'UTC', d('2026-01-01T11:00:00Z'), null)).toEqual(d('2026-01-01T11:00:00Z'));
  });
});
