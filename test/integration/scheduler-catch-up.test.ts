import type { Kysely } from 'kysely';
import { upcomingOccurrences, type CatchUpPolicy, type ManualClock } from '@metronome/core';
import type { DB, ScheduleRepository } from '@metronome/db';
import type { Metrics } from '@metronome/observability';
import { runTick, type TickDeps } from '../../services/scheduler/src/tick.js';
import { schedulerTestbed, type SchedulerTestbed } from '../helpers/scheduler-testbed.js';
import { seedCampaignOfNewAccount } from '../helpers/seed.js';

// Catch-up after downtime: an interval campaign (every 60 s) runs at T0, then the scheduler is
// stopped for three intervals (T0+1, T0+2 and T0+3 min are missed) and restarted at T0+3:30,
// ticking against a manual clock. Each policy decides what the restart creates.

const T0 = Date.parse('2026-06-01T09:00:00Z');
const MIN = 60_000;
const at = (minutes: number) => new Date(T0 + minutes * MIN).toISOString();

let bed: SchedulerTestbed;
let db: Kysely<DB>;
let clock: ManualClock;
let metrics: Metrics;
let deps: TickDeps;
let repo: ScheduleRepository;
let fence: number;

beforeEach(async () => {
  bed = await schedulerTestbed('catchup', T0);
  ({ db, clock, metrics, repo, deps } = bed);
  fence = await repo.takeFence('me', new Date(clock.now()));
});
afterEach(() => bed.close());

async function seed(policy: CatchUpPolicy, maxLatenessSeconds: number | null): Promise<string> {
  const { campaignId } = await seedCampaignOfNewAccount(db, {
    campaign: { next_run_at: new Date(T0), catch_up_policy: policy, catch_up_max_lateness_seconds: maxLatenessSeconds },
  });
  return campaignId;
}

const scheduledRuns = async (campaignId: string) =>
  (await db.selectFrom('runs').select(['scheduled_at', 'status']).where('campaign_id', '=', campaignId).orderBy('scheduled_at').execute()).map((r) => ({
    at: r.scheduled_at.toISOString(),
    status: r.status,
  }));
const campaign = (id: string) =>
  db.selectFrom('campaigns').select(['next_run_at', 'skipped_count', 'last_skipped_at', 'catch_up_through']).where('id', '=', id).executeTakeFirstOrThrow();
/** The sender's part, as far as the schedule cares: the open run ends. */
const finishOpenRuns = (id: string) =>
  db
    .updateTable('runs')
    .set({ status: 'success', finished_at: new Date(clock.now()) })
    .where('campaign_id', '=', id)
    .where('status', 'in', ['queued', 'running'])
    .execute();
const skippedMetric = async () => Object.fromEntries((await metrics.occurrencesSkipped.get()).values.map((v) => [v.labels.reason, v.value]));

/** Runs at T0, then the scheduler is down until T0+3:30. */
async function downForThreeIntervals(id: string): Promise<void> {
  expect((await runTick(deps, fence)).created).toBe(1);
  await finishOpenRuns(id);
  clock.set(T0 + 3.5 * MIN);
}

test('latest (the default, lateness one interval): the restart runs T0+3 alone; T0+1 and T0+2 are skipped as too late', async () => {
  const id = await seed('latest', null);
  await downForThreeIntervals(id);
  expect(await runTick(deps, fence)).toMatchObject({ created: 1, skipped: { too_late: 2, superseded: 0, missed: 0, catch_up_limit: 0 } });
  expect(await scheduledRuns(id)).toEqual([
    { at: at(0), status: 'success' },
    { at: at(3), status: 'queued' },
  ]);
  const c = await campaign(id);
  expect({ next: c.next_run_at?.toISOString(), skipped: Number(c.skipped_count), last: c.last_skipped_at?.toISOString() }).toEqual({
    next: at(4),
    skipped: 2,
    last: at(2),
  });
  expect(await skippedMetric()).toMatchObject({ too_late: 2 });
});

test('latest with a wider lateness: the earlier missed ones are superseded, still one run', async () => {
  const id = await seed('latest', 3600);
  await downForThreeIntervals(id);
  expect(await runTick(deps, fence)).toMatchObject({ created: 1, skipped: { superseded: 2, too_late: 0 } });
  expect((await scheduledRuns(id)).map((r) => r.at)).toEqual([at(0), at(3)]);
  expect(await skippedMetric()).toMatchObject({ superseded: 2 });
});

test('skip: the restart creates nothing; the next occurrence reached on time runs', async () => {
  const id = await seed('skip', null);
  await downForThreeIntervals(id);
  // T0+1 and T0+2 are older than one interval; T0+3 is within it but not reached on time
  expect(await runTick(deps, fence)).toMatchObject({ created: 0, skipped: { too_late: 2, missed: 1 } });
  expect((await scheduledRuns(id)).map((r) => r.at)).toEqual([at(0)]);
  expect(Number((await campaign(id)).skipped_count)).toBe(3);
  clock.set(T0 + 4 * MIN + 300);
  expect((await runTick(deps, fence)).created).toBe(1);
  expect((await scheduledRuns(id)).map((r) => r.at)).toEqual([at(0), at(4)]);
  expect(await skippedMetric()).toMatchObject({ too_late: 2, missed: 1 });
});

test('all: each missed occurrence gets its own run, in order, one open at a time, as the preview said', async () => {
  const id = await seed('all', 3600);
  await downForThreeIntervals(id);
  // What GET /v1/campaigns/{id}/occurrences answers at the restart, from the stored campaign.
  const stored = await db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const preview = upcomingOccurrences(
    {
      campaignId: id,
      schedule: stored.schedule,
      timezone: stored.timezone,
      window: { start: stored.window_start, end: stored.window_end },
      nextRunAt: stored.next_run_at,
      lastScheduledAt: new Date(T0),
      catchUp: { policy: 'all', maxLatenessSeconds: 3600 },
      acceptedThrough: stored.catch_up_through,
    },
    new Date(clock.now()),
    4,
  ).map((o) => o.scheduledAt.toISOString());
  expect(preview).toEqual([at(1), at(2), at(3), at(4)]);

  expect((await runTick(deps, fence)).created).toBe(1);
  expect((await campaign(id)).catch_up_through?.toISOString()).toBe(at(3));
  // the rule of one open run per campaign holds: the next missed one waits for this one to end
  expect((await runTick(deps, fence)).created).toBe(0);
  for (let i = 0; i < 2; i++) {
    await finishOpenRuns(id);
    expect((await runTick(deps, fence)).created).toBe(1);
  }
  await finishOpenRuns(id);
  expect((await runTick(deps, fence)).created).toBe(0); // T0+4 is not due yet
  clock.set(T0 + 4 * MIN);
  expect((await runTick(deps, fence)).created).toBe(1);
  const runs = await scheduledRuns(id);
  expect(runs.map((r) => r.at)).toEqual([at(0), ...preview]);
  expect(runs.filter((r) => r.status === 'queued')).toHaveLength(1);
  const c = await campaign(id);
  expect({ skipped: Number(c.skipped_count), through: c.catch_up_through }).toEqual({ skipped: 0, through: null });
});

test('all, lateness one interval (the default): the backlog is what is still within it', async () => {
  const id = await seed('all', null);
  await downForThreeIntervals(id);
  expect(await runTick(deps, fence)).toMatchObject({ created: 1, skipped: { too_late: 2 } });
  expect((await scheduledRuns(id)).map((r) => r.at)).toEqual([at(0), at(3)]);
});

test('all: never more than 100 runs for one catch-up; never two runs for one occurrence', async () => {
  const id = await seed('all', 86_400);
  await downForThreeIntervals(id);
  clock.set(T0 + 180 * MIN); // 180 occurrences missed: T0+1 … T0+180
  expect(await runTick(deps, fence)).toMatchObject({ created: 1, skipped: { catch_up_limit: 80 } });
  expect((await scheduledRuns(id)).map((r) => r.at)).toEqual([at(0), at(81)]);
  // A concurrent writer sets next_run_at back to an occurrence that already has a run: no second
  // run for it (the too-early rule moves it on; the unique (campaign_id, scheduled_at) index stands behind).
  await finishOpenRuns(id);
  await db
    .updateTable('campaigns')
    .set({ next_run_at: new Date(T0 + 81 * MIN) })
    .where('id', '=', id)
    .execute();
  expect((await runTick(deps, fence)).created).toBe(0);
  expect((await scheduledRuns(id)).filter((r) => r.at === at(81))).toHaveLength(1);
});
