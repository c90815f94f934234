import { sql, type Kysely } from 'kysely';
import type { ManualClock } from '@metronome/core';
import type { DB, ScheduleRepository } from '@metronome/db';
import type { Metrics } from '@metronome/observability';
import type { RunQueue } from '@metronome/queue';
import { reconcile } from '../../services/scheduler/src/reconcile.js';
import { runTick, type TickDeps } from '../../services/scheduler/src/tick.js';
import { schedulerTestbed, type SchedulerTestbed } from '../helpers/scheduler-testbed.js';
import { seedCampaignOfNewAccount } from '../helpers/seed.js';

// One bad campaign row never stops the tick for anyone else: rows the API would refuse are
// written here with SQL, next to good ones, and the tick runs on real PostgreSQL and Redis.

let bed: SchedulerTestbed;
let db: Kysely<DB>;
let queue: RunQueue;
let clock: ManualClock;
let metrics: Metrics;
let deps: TickDeps;
let repo: ScheduleRepository;

beforeEach(async () => {
  bed = await schedulerTestbed('isolation', Date.parse('2026-06-01T09:00:00Z'));
  ({ db, queue, clock, metrics, repo, deps } = bed);
});
afterEach(() => bed.close());

/** A tenant with an account (`status`) and one campaign; `raw` columns are SQL written as given. */
async function campaign(
  raw: Partial<Record<'schedule' | 'timezone' | 'window_start' | 'window_end' | 'messages' | 'targets' | 'next_run_at', unknown>> = {},
  status: 'active' | 'disabled' = 'active',
) {
  const { campaignId: id } = await seedCampaignOfNewAccount(db, { account: { status }, campaign: { next_run_at: new Date(clock.now()) } });
  for (const [column, value] of Object.entries(raw)) {
    await sql`update campaigns set ${sql.ref(column)} = ${value} where id = ${id}`.execute(db);
  }
  return id;
}

const campaignRow = (id: string) => db.selectFrom('campaigns').select(['active', 'last_error', 'next_run_at']).where('id', '=', id).executeTakeFirstOrThrow();
const runsOf = (id: string) => db.selectFrom('runs').selectAll().where('campaign_id', '=', id).execute();
const failedOutcomes = async () => (await metrics.jobOutcomes.get()).values.find((v) => v.labels.outcome === 'failed')?.value ?? 0;

test('campaigns the tick cannot turn into runs are deactivated with a reason and counted failed once; the others run in the same tick', async () => {
  const good = [await campaign(), await campaign(), await campaign()];
  const poison = {
    // what the API once saved for schedule.once.at = '0000-01-01T00:00:00+23:59' (UTC year -1)
    yearMinusOne: await campaign({
      schedule: sql`${JSON.stringify({ type: 'once', at: '0000-01-01T00:00:00+23:59' })}::jsonb`,
      next_run_at: new Date('0000-01-01T00:00:00+23:59'),
    }),
    minusInfinity: await campaign({ next_run_at: sql`'-infinity'::timestamptz` }),
    // the next occurrence lands after the year 9999
    after9999: await campaign({ schedule: sql`'{"type":"interval","everySeconds":1000000000000}'::jsonb` }),
    badZone: await campaign({ timezone: 'Mars/Olympus_Mons', schedule: sql`'{"type":"cron","expression":"* * * * *"}'::jsonb` }),
    badCron: await campaign({ schedule: sql`'{"type":"cron","expression":"not a cron"}'::jsonb` }),
    unknownType: await campaign({ schedule: sql`'{"type":"weekly"}'::jsonb` }),
    zeroInterval: await campaign({ schedule: sql`'{"type":"interval","everySeconds":0}'::jsonb` }),
    badWindow: await campaign({ window_start: '25:00', window_end: '26:00' }),
    noParts: await campaign({ messages: sql`'{"text":"hi"}'::jsonb` }),
  };
  const fence = await repo.takeFence('me', new Date(clock.now()));

  const result = await runTick(deps, fence);

  expect(result.created).toBe(good.length);
  for (const id of good) {
    const [run] = await runsOf(id);
    expect(run).toMatchObject({ status: 'queued', total: 2 });
    expect(await queue.existing([run!.job_id!])).toEqual(new Set([run!.job_id!]));
  }
  for (const [name, id] of Object.entries(poison)) {
    const row = await campaignRow(id);
    expect({ name, active: row.active, next: row.next_run_at }).toEqual({ name, active: false, next: null });
    expect(row.last_error).toMatch(/^The scheduler could not turn this campaign into a run and deactivated it: .+\. Correct it, then set active to true\.$/);
    expect(await runsOf(id)).toHaveLength(0);
  }
  expect((await campaignRow(poison.yearMinusOne)).last_error).toContain('-000001-12-31T00:01:00.000Z is outside the years 0001 to 9999');
  expect((await campaignRow(poison.after9999)).last_error).toContain('outside the years 0001 to 9999');
  expect((await campaignRow(poison.badZone)).last_error).toContain('"Mars/Olympus_Mons" is not an IANA zone');
  expect((await campaignRow(poison.unknownType)).last_error).toContain('schedule type "weekly" is not interval, cron or once');
  expect(await failedOutcomes()).toBe(Object.keys(poison).length);

  // Set aside for good: later ticks neither fail nor count them again.
  clock.advance(60_000);
  await db.updateTable('runs').set({ status: 'success' }).execute();
  expect((await runTick(deps, fence)).created).toBe(good.length);
  expect(await failedOutcomes()).toBe(Object.keys(poison).length);
});

test('a row the database refuses although every value checks out (a NULL chat id) is found by splitting the batch; the others run', async () => {
  const good = [await campaign(), await campaign(), await campaign(), await campaign(), await campaign()];
  const nullChat = await campaign({ targets: sql`array['a', null]::text[]` });
  const fence = await repo.takeFence('me', new Date(clock.now()));

  expect((await runTick(deps, fence)).created).toBe(good.length);

  for (const id of good) expect(await runsOf(id)).toHaveLength(1);
  expect(await runsOf(nullChat)).toHaveLength(0);
  const row = await campaignRow(nullChat);
  expect(row.active).toBe(false);
  expect(row.last_error).toMatch(/the database refused what it would write \(.*null value in column "chat_id"/);
  expect(await failedOutcomes()).toBe(1);
});

test('a held campaign (its account cannot send) and a window-paused run with values that cannot be evaluated are set aside too', async () => {
  const held = await campaign({ schedule: sql`'{"type":"cron"}'::jsonb` }, 'disabled');
  const heldFine = await campaign({}, 'disabled');
  const resumable = await campaign({ window_start: '09:00', window_end: '10:00' });
  await db.updateTable('campaigns').set({ auto_resume: true }).where('id', '=', resumable).execute();
  const fence = await repo.takeFence('me', new Date(clock.now()));
  await runTick(deps, fence);
  await db.updateTable('runs').set({ status: 'paused', paused_reason: 'window_closed' }).where('campaign_id', '=', resumable).execute();
  // the zone becomes one no library knows before the window opens again
  await db.updateTable('campaigns').set({ timezone: 'Nowhere/Atlantis' }).where('id', '=', resumable).execute();
  clock.set(Date.parse('2026-06-02T09:00:00Z'));

  const result = await runTick(deps, fence);

  expect(result).toMatchObject({ autoResumed: 0, noAccount: 1 });
  expect(await campaignRow(held)).toMatchObject({ active: false });
  expect((await campaignRow(held)).last_error).toContain('its cron schedule has no expression');
  expect(await campaignRow(heldFine)).toMatchObject({ active: true, last_error: null });
  expect(await campaignRow(resumable)).toMatchObject({ active: false });
  expect((await campaignRow(resumable)).last_error).toContain('"Nowhere/Atlantis" is not an IANA zone');
  expect(await failedOutcomes()).toBe(2);
});

test('reconciler: a run that lost its job a moment ago gets one at once; a run whose job is alive gets none; every open run is checked in one pass', async () => {
  const id = await campaign();
  const fence = await repo.takeFence('me', new Date(clock.now()));
  await runTick(deps, fence);
  const [run] = await runsOf(id);
  const reconcileNow = () => reconcile({ repo, queue, clock, logger: deps.logger, metrics, pausedRunTtlMs: 7 * 86_400_000 });

  // touched just now and its job alive: nothing added
  expect((await reconcileNow()).requeued).toBe(0);
  expect(await queue.queue.getJobCounts('delayed', 'waiting')).toEqual({ delayed: 0, waiting: 1 });

  // touched just now and its job gone (Redis lost it): re-added in this very pass
  await queue.queue.obliterate({ force: true });
  await db
    .updateTable('runs')
    .set({ updated_at: new Date(clock.now()) })
    .where('id', '=', run!.id)
    .execute();
  expect((await reconcileNow()).requeued).toBe(1);
  const moved = await db.selectFrom('runs').select('job_id').where('id', '=', run!.id).executeTakeFirstOrThrow();
  expect(await queue.existing([moved.job_id!])).toEqual(new Set([moved.job_id!]));

  // more open runs than one page: all of them in one pass
  // (one open run per campaign: 1,200 inactive copies of the campaign, a run each)
  await sql`
    insert into campaigns (tenant_id, account_id, name, timezone, schedule, messages, targets, active)
    select tenant_id, account_id, 'copy ' || g, timezone, schedule, messages, targets, false
    from campaigns, generate_series(1, 1200) g where id = ${id}
  `.execute(db);
  await sql`
    insert into runs (campaign_id, tenant_id, account_id, trigger, parts, total, scheduled_at, job_id)
    select c.id, c.tenant_id, c.account_id, 'manual', c.messages, 0, ${new Date(clock.now())}, 'lost-' || c.id
    from campaigns c where c.name like 'copy %'
  `.execute(db);
  expect((await reconcileNow()).requeued).toBe(1200);
  const open = await db.selectFrom('runs').select('job_id').where('status', 'in', ['queued', 'running']).execute();
  expect(open).toHaveLength(1201);
  expect((await queue.existing(open.map((r) => r.job_id!))).size).toBe(1201);
  expect((await reconcileNow()).requeued).toBe(0);
}, 30_000);
