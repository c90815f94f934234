import { CATCH_UP_ALL_LIMIT, latenessLimitMs, planCatchUp, type CatchUp, type CatchUpInput } from './catch-up.js';

const d = (s: string) => new Date(s);
const every60: CatchUpInput = {
  schedule: { type: 'interval', everySeconds: 60 },
  timezone: 'UTC',
  catchUp: { policy: 'latest', maxLatenessSeconds: null },
  dueAt: d('2026-06-01T09:00:00Z'),
  acceptedThrough: null,
};
const withPolicy = (catchUp: CatchUp, more: Partial<CatchUpInput> = {}): CatchUpInput => ({ ...every60, catchUp, ...more });
// the scheduler was down from 09:00 to 09:03:30: 09:00, 09:01, 09:02 and 09:03 were missed
const restart = d('2026-06-01T09:03:30Z');

describe('planCatchUp', () => {
  test('on time, every policy runs the due occurrence and skips nothing', () => {
    for (const policy of ['skip', 'latest', 'all'] as const) {
      expect(planCatchUp(withPolicy({ policy, maxLatenessSeconds: null }), d('2026-06-01T09:00:00.400Z'))).toEqual({
        run: every60.dueAt,
        next: d('2026-06-01T09:01:00Z'),
        skipped: { too_late: 0, superseded: 0, missed: 0, catch_up_limit: 0 },
        lastSkippedAt: null,
        acceptedThrough: null,
      });
    }
  });
  test('a run the lookahead reaches before its time is not late', () => {
    expect(planCatchUp(every60, d('2026-06-01T08:59:59.500Z'))).toMatchObject({ run: every60.dueAt, next: d('2026-06-01T09:01:00Z') });
  });
  test('latest: only the latest missed occurrence runs; the others are too late or superseded', () => {
    expect(planCatchUp(every60, restart)).toMatchObject({
      run: d('2026-06-01T09:03:00Z'),
      next: d('2026-06-01T09:04:00Z'),
      skipped: { too_late: 3, superseded: 0 },
    });
    const wide = planCatchUp(withPolicy({ policy: 'latest', maxLatenessSeconds: 3600 }), restart);
    expect(wide).toMatchObject({ run: d('2026-06-01T09:03:00Z'), skipped: { too_late: 0, superseded: 3 }, lastSkippedAt: d('2026-06-01T09:02:00Z') });
  });
  test('skip: missed occurrences never run; one reached on time does', () => {
    expect(planCatchUp(withPolicy({ policy: 'skip', maxLatenessSeconds: 3600 }), restart)).toMatchObject({
      run: null,
      next: d('2026-06-01T09:04:00Z'),
      skipped: { missed: 4 },
      lastSkippedAt: d('2026-06-01T09:03:00Z'),
    });
    // reached 5 s after 09:03 (within ON_TIME_MS): on time, runs
    expect(planCatchUp(withPolicy({ policy: 'skip', maxLatenessSeconds: 3600 }), d('2026-06-01T09:03:05Z'))).toMatchObject({
      run: d('2026-06-01T09:03:00Z'),
      skipped: { missed: 3 },
    });
  });
  test('all: the oldest missed runs first, the rest wait as the backlog, accepted whatever their age later', () => {
    const first = planCatchUp(withPolicy({ policy: 'all', maxLatenessSeconds: 3600 }), restart);
    expect(first).toMatchObject({
      run: d('2026-06-01T09:00:00Z'),
      next: d('2026-06-01T09:01:00Z'),
      acceptedThrough: d('2026-06-01T09:03:00Z'),
      skipped: { too_late: 0 },
    });
    // two hours later (the runs before were slow): the backlog still runs, lateness no longer applies
    const later = planCatchUp(
      withPolicy({ policy: 'all', maxLatenessSeconds: 3600 }, { dueAt: first.next!, acceptedThrough: first.acceptedThrough }),
      d('2026-06-01T11:00:30Z'),
    );
    expect(later.run).toEqual(d('2026-06-01T09:01:00Z'));
    // …while occurrences that came due meanwhile are judged as usual (10:01 onwards are within the hour)
    expect(later.skipped.too_late).toBe(57); // 09:04 … 10:00 are more than an hour old
    expect(later.acceptedThrough).toEqual(d('2026-06-01T11:00:00Z'));
  });
  test(`all: at most ${CATCH_UP_ALL_LIMIT} runs; older ones are skipped`, () => {
    const c = withPolicy({ policy: 'all', maxLatenessSeconds: 86_400 });
    const plan = planCatchUp(c, d('2026-06-01T12:00:00Z')); // 181 occurrences due, 09:00–12:00
    expect(plan.skipped.catch_up_limit).toBe(81);
    expect(plan.run).toEqual(d('2026-06-01T10:21:00Z'));
    expect(plan.lastSkippedAt).toEqual(d('2026-06-01T10:20:00Z'));
  });
  test('default lateness: one interval; a cron: the gap to its next occurrence; never more than a day', () => {
    const cron = { type: 'cron' as const, expression: '0 9 * * *' };
    expect(latenessLimitMs({ policy: 'latest', maxLatenessSeconds: null }, every60.schedule, every60.dueAt, null)).toBe(60_000);
    expect(latenessLimitMs({ policy: 'latest', maxLatenessSeconds: null }, { type: 'interval', everySeconds: 7 * 86_400 }, every60.dueAt, null)).toBe(
      86_400_000,
    );
    expect(latenessLimitMs({ policy: 'latest', maxLatenessSeconds: null }, cron, d('2026-06-01T09:00:00Z'), d('2026-06-01T09:30:00Z'))).toBe(1_800_000);
    expect(latenessLimitMs({ policy: 'latest', maxLatenessSeconds: 120 }, cron, d('2026-06-01T09:00:00Z'), d('2026-06-01T09:30:00Z'))).toBe(120_000);
  });
  test('a cron campaign down over two of its occurrences runs the latest under latest', () => {
    const c: CatchUpInput = { ...every60, schedule: { type: 'cron', expression: '0 * * * *' }, dueAt: d('2026-06-01T09:00:00Z') };
    expect(planCatchUp(c, d('2026-06-01T11:20:00Z'))).toMatchObject({
      run: d('2026-06-01T11:00:00Z'),
      next: d('2026-06-01T12:00:00Z'),
      skipped: { too_late: 2 },
    });
  });
  test('a once-campaign runs however late', () => {
    const c: CatchUpInput = { ...every60, schedule: { type: 'once', at: '2026-06-01T09:00:00Z' }, catchUp: { policy: 'skip', maxLatenessSeconds: 1 } };
    expect(planCatchUp(c, d('2026-06-03T00:00:00Z'))).toMatchObject({ run: every60.dueAt, next: null });
  });
});
