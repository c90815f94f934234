import type { Kysely } from 'kysely';
import { firstOccurrence, upcomingOccurrences, type ManualClock, type Schedule } from '@metronome/core';
import type { DB } from '@metronome/db';
import { runTick, type TickDeps } from '../../services/scheduler/src/tick.js';
import { schedulerTestbed, type SchedulerTestbed } from '../helpers/scheduler-testbed.js';
import { seedAccount, seedCampaign, seedTenant } from '../helpers/seed.js';

// The DST rule (CONTRACT, Campaigns) against what the scheduler really creates: a cron campaign
// is created as the API creates it (its first occurrence from libs/core), then the tick runs on a
// manual clock set to each next_run_at in turn, across a daylight-saving change, and the runs'
// scheduledAt are compared with the rule: a wall time that happens twice fires once (the first),
// one that does not exist fires at the first instant after the gap; interval campaigns keep
// absolute time. The preview the API would have answered at the start is compared too.

let bed: SchedulerTestbed;
let db: Kysely<DB>;
let clock: ManualClock;
let deps: TickDeps;
let fence: number;

beforeAll(async () => {
  bed = await schedulerTestbed('dst', 0);
  ({ db, clock, deps } = bed);
  fence = await bed.repo.takeFence('me', new Date());
});
afterAll(() => bed.close());

/** Creates the campaign at `from`, then ticks at each of its next occurrences; the runs' scheduledAt (UTC, minutes). */
async function drive(schedule: Schedule, timezone: string, from: string, runs: number): Promise<{ created: string[]; previewed: string[] }> {
  const tenantId = await seedTenant(db);
  const accountId = await seedAccount(db, tenantId);
  clock.set(Date.parse(from));
  const first = firstOccurrence(schedule, timezone, new Date(clock.now()));
  const id = await seedCampaign(db, { tenantId, accountId }, { name: 'dst', timezone, schedule: JSON.stringify(schedule), targets: ['a'], next_run_at: first });
  const previewed = upcomingOccurrences(
    { campaignId: id, schedule, timezone, window: { start: '00:00', end: '24:00' }, nextRunAt: first, lastScheduledAt: null },
    new Date(clock.now()),
    runs,
  ).map((o) => o.scheduledAt.toISOString().slice(0, 16));
  for (let i = 0; i < runs; i++) {
    const { next_run_at: next } = await db.selectFrom('campaigns').select('next_run_at').where('id', '=', id).executeTakeFirstOrThrow();
    clock.set(next!.getTime());
    expect((await runTick(deps, fence)).created).toBe(1);
    await db
      .updateTable('runs')
      .set({ status: 'success', finished_at: new Date(clock.now()) })
      .where('campaign_id', '=', id)
      .where('status', '=', 'queued')
      .execute();
  }
  // done with it: the next case moves the clock to other dates, where this one would be due
  await db.updateTable('campaigns').set({ active: false }).where('id', '=', id).execute();
  const rows = await db.selectFrom('runs').select('scheduled_at').where('campaign_id', '=', id).orderBy('scheduled_at').execute();
  return { created: rows.map((r) => r.scheduled_at.toISOString().slice(0, 16)), previewed };
}

const cron = (expression: string): Schedule => ({ type: 'cron', expression });

test.each([
  // [zone, expression, from, expected runs (UTC), what happens]
  [
    'America/New_York',
    '30 2 * * *',
    '2026-03-07T00:00Z',
    ['2026-03-07T07:30', '2026-03-08T07:00', '2026-03-09T06:30'],
    '02:30 does not exist on 8 March: 03:00 EDT',
  ],
  [
    'America/New_York',
    '*/30 1 * * *',
    '2026-10-31T12:00Z',
    ['2026-11-01T05:00', '2026-11-01T05:30', '2026-11-02T06:00', '2026-11-02T06:30'],
    '01:00 and 01:30 happen twice on 1 November: EDT only',
  ],
  [
    'Europe/Berlin',
    '15 2 * * *',
    '2026-03-27T12:00Z',
    ['2026-03-28T01:15', '2026-03-29T01:00', '2026-03-30T00:15'],
    '02:15 does not exist on 29 March: 03:00 CEST',
  ],
  ['Europe/Berlin', '30 2 * * *', '2026-10-24T12:00Z', ['2026-10-25T00:30', '2026-10-26T01:30'], '02:30 happens twice on 25 October: CEST only'],
  [
    'Australia/Lord_Howe',
    '15 2 * * *',
    '2026-10-02T00:00Z',
    ['2026-10-02T15:45', '2026-10-03T15:30', '2026-10-04T15:15'],
    'a 30-minute gap (02:00 → 02:30) on 4 October: 02:30',
  ],
  ['Australia/Lord_Howe', '45 1 * * *', '2026-04-04T00:00Z', ['2026-04-04T14:45', '2026-04-05T15:15'], '01:30–02:00 happens twice on 5 April: +11:00 only'],
  [
    'Pacific/Chatham',
    '50 2 * * *',
    '2026-09-25T00:00Z',
    ['2026-09-25T14:05', '2026-09-26T14:00', '2026-09-27T13:05'],
    'a +12:45 zone; 02:50 does not exist on 27 September: 03:45 +13:45',
  ],
  ['Pacific/Chatham', '0 3 * * *', '2026-04-04T00:00Z', ['2026-04-04T13:15', '2026-04-05T14:15'], '03:00 happens twice on 5 April: +13:45 only'],
  [
    'Australia/Sydney',
    '*/20 2 * * *',
    '2026-04-04T12:00Z',
    ['2026-04-04T15:00', '2026-04-04T15:20', '2026-04-04T15:40', '2026-04-05T16:00'],
    'southern autumn: 02:00–02:40 repeated on 5 April fire once',
  ],
  [
    'Australia/Sydney',
    '*/20 2 * * *',
    '2026-10-03T12:00Z',
    ['2026-10-03T16:00', '2026-10-04T15:00', '2026-10-04T15:20', '2026-10-04T15:40'],
    'southern spring: 02:00–02:40 do not exist on 4 October: once at 03:00',
  ],
])('%s %s from %s fires at %j (%s)', async (zone, expression, from, expected) => {
  const { created, previewed } = await drive(cron(expression), zone, from, expected.length);
  expect(created).toEqual(expected);
  expect(previewed).toEqual(expected);
});

test('an interval campaign keeps absolute time across a change: every hour in UTC, whatever the wall clock says', async () => {
  const { created, previewed } = await drive(
    { type: 'interval', everySeconds: 3600, startAt: '2026-11-01T04:00:00Z' },
    'America/New_York',
    '2026-11-01T03:30Z',
    4,
  );
  // 00:00 EDT, 01:00 EDT, 01:00 EST, 02:00 EST
  expect(created).toEqual(['2026-11-01T04:00', '2026-11-01T05:00', '2026-11-01T06:00', '2026-11-01T07:00']);
  expect(previewed).toEqual(created);
});
