import { planOccurrence, type DueOccurrence } from './occurrence-plan.js';

const base: DueOccurrence = {
  campaignId: '00000000-0000-4000-8000-000000000001',
  schedule: { type: 'interval', everySeconds: 60 },
  timezone: 'UTC',
  window: { start: '00:00', end: '24:00' },
  dueAt: new Date('2026-06-01T09:00:00Z'),
};

describe('planOccurrence', () => {
  test('on time: a run at the due time, next one interval later', () => {
    expect(planOccurrence(base, base.dueAt, 0)).toEqual({
      kind: 'run',
      occurrence: base.dueAt,
      scheduledAt: base.dueAt,
      windowEndAt: null,
      next: new Date('2026-06-01T09:01:00Z'),
      coalesced: 0,
      skipped: { too_late: 0, superseded: 0, missed: 0, catch_up_limit: 0 },
      lastSkippedAt: null,
      acceptedThrough: null,
    });
  });
  test('jitter only ever delays, is deterministic, stays under its bound, and spreads', () => {
    const delays: number[] = [];
    for (let i = 0; i < 200; i++) {
      const o = { ...base, campaignId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` };
      const a = planOccurrence(o, o.dueAt, 5_000);
      const b = planOccurrence(o, o.dueAt, 5_000);
      expect(a).toEqual(b);
      if (a.kind !== 'run') throw new Error('expected a run');
      const delay = a.scheduledAt.getTime() - o.dueAt.getTime();
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(5_000);
      expect(a.next).toEqual(new Date('2026-06-01T09:01:00Z')); // the grid is not jittered
      delays.push(delay);
    }
    // a jitter stuck at 0 (or at one value) would pass every check above: the campaigns must
    // spread over the whole allowance
    expect(new Set(delays).size).toBeGreaterThan(150);
    expect(Math.min(...delays)).toBeLessThan(500);
    expect(Math.max(...delays)).toBeGreaterThan(4_500);
  });
  test('behind by several periods (default catch-up: latest, lateness one interval): the latest runs at its own time', () => {
    const plan = planOccurrence(base, new Date('2026-06-01T09:05:30Z'), 0);
    // 09:00–09:04 are more than 60 s old: too late
    expect(plan).toMatchObject({ kind: 'run', scheduledAt: new Date('2026-06-01T09:05:00Z'), next: new Date('2026-06-01T09:06:00Z'), coalesced: 5 });
    expect(plan).toMatchObject({ skipped: { too_late: 5, superseded: 0 }, lastSkippedAt: new Date('2026-06-01T09:04:00Z') });
  });
  test('due outside a midnight-crossing window: waits for its next start', () => {
    const o = { ...base, window: { start: '22:00', end: '02:00' } };
    expect(planOccurrence(o, o.dueAt, 0)).toMatchObject({ kind: 'wait-for-window', next: new Date('2026-06-01T22:00:00Z') });
  });
  test('due inside a midnight-crossing window after midnight: runs until the close', () => {
    const o = { ...base, window: { start: '22:00', end: '02:00' }, dueAt: new Date('2026-06-02T01:30:00Z') };
    expect(planOccurrence(o, o.dueAt, 0)).toMatchObject({ kind: 'run', scheduledAt: o.dueAt, windowEndAt: new Date('2026-06-02T02:00:00Z') });
  });
  test('due in a DST gap: waits for the first real instant of the window', () => {
    const o = { ...base, timezone: 'America/New_York', window: { start: '02:30', end: '04:00' }, dueAt: new Date('2026-03-08T06:00:00Z') }; // 01:00 EST
    expect(planOccurrence(o, o.dueAt, 0)).toMatchObject({ kind: 'wait-for-window', next: new Date('2026-03-08T07:00:00Z') }); // 03:00 EDT
  });
  test('an interval occurrence due less than everySeconds after the previous run is moved, not run', () => {
    const o = { ...base, dueAt: new Date('2026-06-01T09:00:01Z'), lastScheduledAt: new Date('2026-06-01T09:00:00Z') };
    expect(planOccurrence(o, o.dueAt, 0)).toEqual({ kind: 'too-early', next: new Date('2026-06-01T09:01:00Z') });
    // within the jitter allowance it runs (jittered runs sit up to jitterMaxMs off their grid point)
    expect(planOccurrence({ ...o, dueAt: new Date('2026-06-01T09:00:58Z') }, o.dueAt, 5_000).kind).toBe('run');
    // a full interval after the previous run: runs
    expect(planOccurrence({ ...o, dueAt: new Date('2026-06-01T09:01:00Z') }, o.dueAt, 0).kind).toBe('run');
  });
});
