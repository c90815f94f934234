import { upcomingOccurrences, type PreviewCampaign } from './occurrence-preview.js';

// The runs the scheduler will create, decided by planOccurrence as its ticks decide them.

const KL = 'Asia/Kuala_Lumpur';
const NY = 'America/New_York';
const iso = (d: Date | null) => (d ? d.toISOString() : null);
const shown = (items: ReturnType<typeof upcomingOccurrences>) =>
  items.map((o) => ({ scheduledAt: iso(o.scheduledAt), startsAt: iso(o.startsAt), windowEndAt: iso(o.windowEndAt) }));

function campaign(extra: Partial<PreviewCampaign>): PreviewCampaign {
  return {
    campaignId: 'c1',
    schedule: { type: 'interval', everySeconds: 300 },
    timezone: KL,
    window: { start: '00:00', end: '24:00' },
    nextRunAt: null,
    lastScheduledAt: null,
    ...extra,
  };
}

test('an interval inside its window: every everySeconds from the next occurrence', () => {
  const now = new Date('2030-01-16T03:00:00Z'); // 11:00 in Kuala Lumpur
  const c = campaign({ nextRunAt: new Date('2030-01-16T03:02:00Z'), window: { start: '06:00', end: '18:00' } });
  expect(shown(upcomingOccurrences(c, now, 3))).toEqual([
    { scheduledAt: '2030-01-16T03:02:00.000Z', startsAt: '2030-01-16T03:02:00.000Z', windowEndAt: '2030-01-16T10:00:00.000Z' },
    { scheduledAt: '2030-01-16T03:07:00.000Z', startsAt: '2030-01-16T03:07:00.000Z', windowEndAt: '2030-01-16T10:00:00.000Z' },
    { scheduledAt: '2030-01-16T03:12:00.000Z', startsAt: '2030-01-16T03:12:00.000Z', windowEndAt: '2030-01-16T10:00:00.000Z' },
  ]);
});

test('an interval at the close: the occurrence after it waits for the opening, and the grid goes on from there', () => {
  const now = new Date('2030-01-16T09:50:00Z'); // 17:50
  const c = campaign({ nextRunAt: new Date('2030-01-16T09:55:00Z'), window: { start: '06:00', end: '18:00' } });
  expect(shown(upcomingOccurrences(c, now, 3))).toEqual([
    { scheduledAt: '2030-01-16T09:55:00.000Z', startsAt: '2030-01-16T09:55:00.000Z', windowEndAt: '2030-01-16T10:00:00.000Z' },
    // 18:00 is outside: its run starts at 06:00 the next day
    { scheduledAt: '2030-01-16T10:00:00.000Z', startsAt: '2030-01-16T22:00:00.000Z', windowEndAt: '2030-01-17T10:00:00.000Z' },
    { scheduledAt: '2030-01-16T22:05:00.000Z', startsAt: '2030-01-16T22:05:00.000Z', windowEndAt: '2030-01-17T10:00:00.000Z' },
  ]);
});

test('a cron across the spring-forward in America/New_York: 09:00 local on both sides; 02:30 runs at 03:00 on the day it does not exist', () => {
  const now = new Date('2030-03-08T12:00:00Z');
  const nine = campaign({ schedule: { type: 'cron', expression: '0 9 * * *' }, timezone: NY, nextRunAt: new Date('2030-03-08T14:00:00Z') });
  expect(shown(upcomingOccurrences(nine, now, 4)).map((o) => o.scheduledAt)).toEqual([
    '2030-03-08T14:00:00.000Z', // EST, UTC−5
    '2030-03-09T14:00:00.000Z',
    '2030-03-10T13:00:00.000Z', // EDT from 10 March, UTC−4
    '2030-03-11T13:00:00.000Z',
  ]);
  const gap = campaign({ schedule: { type: 'cron', expression: '30 2 * * *' }, timezone: NY, nextRunAt: new Date('2030-03-09T07:30:00Z') });
  expect(shown(upcomingOccurrences(gap, now, 3)).map((o) => o.startsAt)).toEqual([
    '2030-03-09T07:30:00.000Z',
    '2030-03-10T07:00:00.000Z',
    '2030-03-11T06:30:00.000Z',
  ]);
});

test('a cron with a window in America/New_York across the fall-back: each run starts at the 08:00 opening, local', () => {
  const now = new Date('2030-11-02T00:00:00Z');
  // 06:00 local is before the 08:00–20:00 window: each run waits for its opening
  const c = campaign({
    schedule: { type: 'cron', expression: '0 6 * * *' },
    timezone: NY,
    window: { start: '08:00', end: '20:00' },
    nextRunAt: new Date('2030-11-02T10:00:00Z'),
  });
  expect(shown(upcomingOccurrences(c, now, 3))).toEqual([
    { scheduledAt: '2030-11-02T10:00:00.000Z', startsAt: '2030-11-02T12:00:00.000Z', windowEndAt: '2030-11-03T00:00:00.000Z' },
    { scheduledAt: '2030-11-03T11:00:00.000Z', startsAt: '2030-11-03T13:00:00.000Z', windowEndAt: '2030-11-04T01:00:00.000Z' },
    { scheduledAt: '2030-11-04T11:00:00.000Z', startsAt: '2030-11-04T13:00:00.000Z', windowEndAt: '2030-11-05T01:00:00.000Z' },
  ]);
});

test('once: its one run; none when the campaign has no next occurrence (inactive, or once and done)', () => {
  const now = new Date('2030-01-16T03:00:00Z');
  const once = campaign({ schedule: { type: 'once', at: '2030-01-20T01:00:00.000Z' }, nextRunAt: new Date('2030-01-20T01:00:00Z') });
  expect(shown(upcomingOccurrences(once, now, 10)).map((o) => o.scheduledAt)).toEqual(['2030-01-20T01:00:00.000Z']);
  expect(upcomingOccurrences(campaign({ nextRunAt: null }), now, 10)).toEqual([]);
});

test('missed occurrences follow the catch-up policy, as the scheduler applies it', () => {
  const now = new Date('2030-01-16T03:00:00Z');
  const c = campaign({
    schedule: { type: 'interval', everySeconds: 600 },
    nextRunAt: new Date('2030-01-16T02:00:00Z'),
    lastScheduledAt: new Date('2030-01-16T01:50:00Z'),
  });
  // latest (the default): 02:00–02:50 are older than one interval; 03:00, due now, runs
  expect(shown(upcomingOccurrences(c, now, 3)).map((o) => o.scheduledAt)).toEqual([
    '2030-01-16T03:00:00.000Z',
    '2030-01-16T03:10:00.000Z',
    '2030-01-16T03:20:00.000Z',
  ]);
  // all, within a day: each missed one runs, oldest first, then the grid goes on
  const all = { ...c, catchUp: { policy: 'all' as const, maxLatenessSeconds: 86_400 } };
  expect(shown(upcomingOccurrences(all, now, 8)).map((o) => o.scheduledAt?.slice(11, 16))).toEqual([
    '02:00',
    '02:10',
    '02:20',
    '02:30',
    '02:40',
    '02:50',
    '03:00',
    '03:10',
  ]);
  // skip: 03:00 is reached on time (now), the missed ones are not run
  const skip = { ...c, catchUp: { policy: 'skip' as const, maxLatenessSeconds: null } };
  expect(shown(upcomingOccurrences(skip, new Date('2030-01-16T03:05:00Z'), 2)).map((o) => o.scheduledAt?.slice(11, 16))).toEqual(['03:10', '03:20']);
});

test('jitter, when given, only ever delays a run and is the same on every call', () => {
  const now = new Date('2030-01-16T03:00:00Z');
  const c = campaign({ nextRunAt: new Date('2030-01-16T03:05:00Z') });
  const plain = upcomingOccurrences(c, now, 5);
  const jittered = upcomingOccurrences(c, now, 5, 30_000);
  expect(jittered).toEqual(upcomingOccurrences(c, now, 5, 30_000));
  jittered.forEach((o, i) => {
    expect(o.startsAt.getTime()).toBeGreaterThanOrEqual(plain[i]!.startsAt.getTime());
    expect(o.startsAt.getTime() - plain[i]!.startsAt.getTime()).toBeLessThan(30_000);
  });
  // a jitter stuck at 0 passes the checks above: the occurrences must be delayed, and not all alike
  const delays = jittered.map((o, i) => o.startsAt.getTime() - plain[i]!.startsAt.getTime());
  expect(new Set(delays).size).toBeGreaterThan(3);
  expect(Math.max(...delays)).toBeGreaterThan(10_000);
});
