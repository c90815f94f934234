import type { Redis } from 'ioredis';
import type { ManualClock } from '@metronome/core';
import { StaleFenceError, type DB, type ScheduleRepository } from '@metronome/db';
import type { Kysely } from 'kysely';
import type { RunQueue } from '@metronome/queue';
import { runTick, type TickDeps } from '../../services/scheduler/src/tick.js';
import { reconcile } from '../../services/scheduler/src/reconcile.js';
import { schedulerTestbed, type SchedulerTestbed } from '../helpers/scheduler-testbed.js';
import { seedCampaignOfNewAccount } from '../helpers/seed.js';

// The scheduler's tick and reconciler on real PostgreSQL and Redis, with a manual clock.

let bed: SchedulerTestbed;
let db: Kysely<DB>;
let redis: Redis;
let queue: RunQueue;
let clock: ManualClock;
let deps: TickDeps;
let repo: ScheduleRepository;

beforeEach(async () => {
  bed = await schedulerTestbed('sched', Date.parse('2026-06-01T09:00:00Z'));
  ({ db, redis, queue, clock, repo, deps } = bed);
});
afterEach(() => bed.close());

async function seed(
  opts: {
    accountStatus?: 'active' | 'disabled';
    blockedUntil?: Date;
    window?: [string, string];
    every?: number;
    nextRunAt?: Date;
    targets?: string[];
    timezone?: string;
  } = {},
) {
  return seedCampaignOfNewAccount(db, {
    account: { status: opts.accountStatus ?? 'active', blocked_until: opts.blockedUntil ?? null },
    campaign: {
      timezone: opts.timezone ?? 'UTC',
      schedule: JSON.stringify({ type: 'interval', everySeconds: opts.every ?? 60 }),
      window_start: opts.window?.[0] ?? '00:00',
      window_end: opts.window?.[1] ?? '24:00',
      targets: opts.targets ?? ['a', 'b', 'c'],
      next_run_at: opts.nextRunAt ?? new Date(clock.now()),
    },
  });
}

const runsOf = (campaignId: string) => db.selectFrom('runs').selectAll().where('campaign_id', '=', campaignId).orderBy('scheduled_at').execute();
const nextRunAt = async (campaignId: string) =>
  (await db.selectFrom('campaigns').select('next_run_at').where('id', '=', campaignId).executeTakeFirstOrThrow()).next_run_at;

test('a due campaign becomes one run with its targets and one job, and moves to its next occurrence', async () => {
  const { campaignId } = await seed();
  const fence = await repo.takeFence('me', new Date(clock.now()));
  expect(await runTick(deps, fence)).toMatchObject({ created: 1, waitingForWindow: 0, noAccount: 0 });
  const [run] = await runsOf(campaignId);
  expect(run).toMatchObject({ status: 'queued', trigger: 'schedule', total: 3, window_end_at: null });
  expect(run!.scheduled_at.toISOString()).toBe('2026-06-01T09:00:00.000Z');
  const targets = await db.selectFrom('run_targets').select(['chat_id', 'status']).where('run_id', '=', run!.id).orderBy('chat_id').execute();
  expect(targets).toEqual([
    { chat_id: 'a', status: 'pending' },
    { chat_id: 'b', status: 'pending' },
    { chat_id: 'c', status: 'pending' },
  ]);
  expect(await queue.queue.getJob(run!.job_id!)).toBeTruthy();
  expect((await nextRunAt(campaignId))!.toISOString()).toBe('2026-06-01T09:01:00.000Z');
  // the same tick again creates nothing: the next occurrence is not due
  expect((await runTick(deps, fence)).created).toBe(0);
});

test('a deleted campaign is never due, whether its account can send or not, even if its row still says active', async () => {
  // DELETE deactivates as well; the tick's due queries check deleted_at themselves, so a row
  // deleted without it (an older write, a manual fix) never runs again.
  const sending = await seed();
  const held = await seed({ accountStatus: 'disabled' });
  await db
    .updateTable('campaigns')
    .set({ deleted_at: new Date(clock.now()) })
    .where('id', 'in', [sending.campaignId, held.campaignId])
    .execute();
  const fence = await repo.takeFence('me', new Date(clock.now()));
  expect(await runTick(deps, fence)).toMatchObject({ created: 0, noAccount: 0 });
  expect(await runsOf(sending.campaignId)).toEqual([]);
  expect((await nextRunAt(held.campaignId))!.toISOString()).toBe('2026-06-01T09:00:00.000Z');
});

test('an occurrence due while a run is open waits for it (no overlap), then starts', async () => {
  const { campaignId } = await seed();
  const fence = await repo.takeFence('me', new Date(clock.now()));
  await runTick(deps, fence);
  clock.advance(90_000);
  expect((await runTick(deps, fence)).created).toBe(0);
  await db.updateTable('runs').set({ status: 'success' }).where('campaign_id', '=', campaignId).execute();
  expect((await runTick(deps, fence)).created).toBe(1);
  const runs = await runsOf(campaignId);
  expect(runs.map((r) => r.scheduled_at.toISOString())).toEqual(['2026-06-01T09:00:00.000Z', '2026-06-01T09:01:00.000Z']);
});

test('a paused run does not hold back later occurrences', async () => {
  const { campaignId } = await seed();
  const fence = await repo.takeFence('me', new Date(clock.now()));
  await runTick(deps, fence);
  await db.updateTable('runs').set({ status: 'paused', paused_reason: 'window_closed' }).where('campaign_id', '=', campaignId).execute();
  clock.advance(60_000);
  expect((await runTick(deps, fence)).created).toBe(1);
});

test('due outside the delivery window: no run, the occurrence moves to the next opening', async () => {
  const { campaignId } = await seed({ window: ['10:00', '12:00'], timezone: 'Asia/Kuala_Lumpur', nextRunAt: new Date('2026-06-01T05:00:00Z') });
  clock.set(Date.parse('2026-06-01T05:00:00Z')); // 13:00 in Kuala Lumpur
  const fence = await repo.takeFence('me', new Date(clock.now()));
  expect(await runTick(deps, fence)).toMatchObject({ created: 0, waitingForWindow: 1, noAccount: 0 });
  expect((await nextRunAt(campaignId))!.toISOString()).toBe('2026-06-02T02:00:00.000Z');
  clock.set(Date.parse('2026-06-02T02:00:00Z'));
  expect((await runTick(deps, fence)).created).toBe(1);
  const [run] = await runsOf(campaignId);
  expect(run!.window_end_at!.toISOString()).toBe('2026-06-02T04:00:00.000Z');
});

test('campaigns whose account cannot send are not enqueued but counted', async () => {
  const disabled = await seed({ accountStatus: 'disabled' });
  const blocked = await seed({ blockedUntil: new Date(clock.now() + 60_000) });
  const fence = await repo.takeFence('me', new Date(clock.now()));
  expect(await runTick(deps, fence)).toMatchObject({ created: 0, waitingForWindow: 0, noAccount: 2 });
  expect(await runsOf(disabled.campaignId)).toHaveLength(0);
  clock.advance(61_000);
  expect((await runTick(deps, fence)).created).toBe(1);
  expect(await runsOf(blocked.campaignId)).toHaveLength(1);
});

test('at most SCHEDULER_BATCH runs per tick, oldest due first', async () => {
  const seeded = [];
  for (let i = 0; i < 5; i++) seeded.push(await seed({ nextRunAt: new Date(clock.now() - (5 - i) * 1000) }));
  const fence = await repo.takeFence('me', new Date(clock.now()));
  expect((await runTick({ ...deps, batch: 2 }, fence)).created).toBe(2);
  expect(await runsOf(seeded[0]!.campaignId)).toHaveLength(1);
  expect(await runsOf(seeded[1]!.campaignId)).toHaveLength(1);
  expect(await runsOf(seeded[2]!.campaignId)).toHaveLength(0);
});

test('an old leader whose fence was superseded creates nothing', async () => {
  const { campaignId } = await seed();
  const old = await repo.takeFence('old', new Date(clock.now()));
  await repo.takeFence('new', new Date(clock.now()));
  await expect(runTick(deps, old)).rejects.toBeInstanceOf(StaleFenceError);
  expect(await runsOf(campaignId)).toHaveLength(0);
  expect((await nextRunAt(campaignId))!.toISOString()).toBe('2026-06-01T09:00:00.000Z');
});

test('reconciler: a run whose job vanished from Redis gets a new job; an expired lease is unknown only once its request began', async () => {
  const { campaignId } = await seed();
  const fence = await repo.takeFence('me', new Date(clock.now()));
  await runTick(deps, fence);
  const [run] = await runsOf(campaignId);
  await queue.queue.obliterate({ force: true });
  expect(await queue.queue.getJob(run!.job_id!)).toBeUndefined();
  // `a` had its request written (stamped); `b` was claimed and still waiting for its pace slot
  await db
    .updateTable('run_targets')
    .set({ status: 'in_flight', lease_owner: 'dead', lease_expires_at: new Date(clock.now() + 1000), send_started_at: new Date(clock.now()) })
    .where('run_id', '=', run!.id)
    .where('chat_id', '=', 'a')
    .execute();
  await db
    .updateTable('run_targets')
    .set({ status: 'in_flight', lease_owner: 'dead', lease_expires_at: new Date(clock.now() + 1000) })
    .where('run_id', '=', run!.id)
    .where('chat_id', '=', 'b')
    .execute();
  await db
    .updateTable('runs')
    .set({ updated_at: new Date(clock.now() - 60_000) })
    .where('id', '=', run!.id)
    .execute();
  clock.advance(2000);
  const result = await reconcile({ repo, queue, clock, logger: deps.logger, metrics: deps.metrics, pausedRunTtlMs: 7 * 86_400_000 });
  expect(result).toMatchObject({ requeued: 1, expiredLeases: 1 });
  const moved = await db.selectFrom('runs').select('job_id').where('id', '=', run!.id).executeTakeFirstOrThrow();
  expect(moved.job_id).toBe(`run-${run!.id}-1`);
  expect(await queue.queue.getJob(moved.job_id!)).toBeTruthy();
  const a = await db
    .selectFrom('run_targets')
    .select(['status', 'error_code'])
    .where('run_id', '=', run!.id)
    .where('chat_id', '=', 'a')
    .executeTakeFirstOrThrow();
  expect(a).toEqual({ status: 'unknown', error_code: 'lease_expired' });
  const b = await db
    .selectFrom('run_targets')
    .select(['status', 'attempts', 'lease_owner', 'next_attempt_at'])
    .where('run_id', '=', run!.id)
    .where('chat_id', '=', 'b')
    .executeTakeFirstOrThrow();
  expect(b).toEqual({ status: 'pending', attempts: 0, lease_owner: null, next_attempt_at: new Date(clock.now()) });
  // a second pass finds the job alive and adds nothing
  expect((await reconcile({ repo, queue, clock, logger: deps.logger, metrics: deps.metrics, pausedRunTtlMs: 7 * 86_400_000 })).requeued).toBe(0);
});

test('NO_ACCOUNT_AUTOPAUSE_AFTER: consecutive no-account occurrences are counted, then the campaign is paused with a reason', async () => {
  const { campaignId, accountId } = await seed({ accountStatus: 'disabled', every: 60 });
  const fence = await repo.takeFence('me', new Date(clock.now()));
  const auto = { ...deps, noAccountAutopauseAfter: 3 };
  const campaign = () =>
    db.selectFrom('campaigns').select(['active', 'no_account_streak', 'paused_reason', 'next_run_at']).where('id', '=', campaignId).executeTakeFirstOrThrow();
  expect(await runTick(auto, fence)).toMatchObject({ noAccount: 1, autoPaused: 0 });
  expect(await campaign()).toMatchObject({ active: true, no_account_streak: 1 });
  // re-checked every tick, but the same occurrence does not count twice
  clock.advance(30_000);
  await runTick(auto, fence);
  expect((await campaign()).no_account_streak).toBe(1);
  clock.advance(30_000); // the next occurrence passes: two in a row
  await runTick(auto, fence);
  expect((await campaign()).no_account_streak).toBe(2);
  clock.advance(60_000);
  expect(await runTick(auto, fence)).toMatchObject({ autoPaused: 1 });
  const paused = await campaign();
  expect(paused).toMatchObject({ active: false, no_account_streak: 3, next_run_at: null });
  expect(paused.paused_reason).toMatch(/^no_account: 3 occurrences in a row .* account is disabled/);
  expect(await runsOf(campaignId)).toHaveLength(0);
  void accountId;
});

test('a run created after no-account occurrences resets the streak; 0 never pauses', async () => {
  const { campaignId, accountId } = await seed({ accountStatus: 'disabled', every: 60 });
  const fence = await repo.takeFence('me', new Date(clock.now()));
  clock.advance(10 * 60_000);
  await runTick(deps, fence);
  const c = await db.selectFrom('campaigns').select(['active', 'no_account_streak']).where('id', '=', campaignId).executeTakeFirstOrThrow();
  expect(c).toEqual({ active: true, no_account_streak: 11 });
  await db.updateTable('accounts').set({ status: 'active' }).where('id', '=', accountId).execute();
  // catch-up latest (the default): T0+10 min, due now, runs; T0…T0+8 min are older than one
  // interval, T0+9 min (exactly one interval old) is superseded by it
  expect(await runTick(deps, fence)).toMatchObject({ created: 1, coalesced: 10, skipped: { too_late: 9, superseded: 1 } });
  expect((await db.selectFrom('campaigns').select('no_account_streak').where('id', '=', campaignId).executeTakeFirstOrThrow()).no_account_streak).toBe(0);
});

test('autoResume: a window-paused run is queued again at the next window start, with a new job and window end', async () => {
  const { campaignId } = await seed({ window: ['09:00', '10:00'], every: 86_400 });
  await db.updateTable('campaigns').set({ auto_resume: true }).where('id', '=', campaignId).execute();
  const fence = await repo.takeFence('me', new Date(clock.now()));
  await runTick(deps, fence);
  const [run] = await runsOf(campaignId);
  // the sender paused it when the window closed
  clock.set(Date.parse('2026-06-01T10:00:01Z'));
  await db
    .updateTable('runs')
    .set({ status: 'paused', paused_reason: 'window_closed', updated_at: new Date(clock.now()) })
    .where('id', '=', run!.id)
    .execute();
  expect((await runTick(deps, fence)).autoResumed).toBe(0);
  clock.set(Date.parse('2026-06-02T08:59:59.500Z')); // within the lookahead of the next opening
  const lookahead = { ...deps, lookaheadMs: 1000 };
  const result = await runTick(lookahead, fence);
  expect(result.autoResumed).toBe(1);
  const after = await db.selectFrom('runs').selectAll().where('id', '=', run!.id).executeTakeFirstOrThrow();
  expect(after).toMatchObject({ status: 'queued', paused_reason: null, job_seq: 1, job_id: `run-${run!.id}-1` });
  expect(after.window_end_at!.toISOString()).toBe('2026-06-02T10:00:00.000Z');
  const job = await queue.queue.getJob(after.job_id!);
  expect(job).toBeTruthy();
  // delayed to the window start (09:00:00 is 500 ms after the tick), never before it
  expect(job!.opts.delay).toBe(500);
  // the day's new occurrence waits for the resumed run (one open run per campaign)
  expect((await runsOf(campaignId)).filter((r) => r.status === 'queued')).toHaveLength(1);
});

test('autoResume off: a window-paused run stays paused', async () => {
  const { campaignId } = await seed({ window: ['09:00', '10:00'], every: 86_400 });
  const fence = await repo.takeFence('me', new Date(clock.now()));
  await runTick(deps, fence);
  await db.updateTable('runs').set({ status: 'paused', paused_reason: 'window_closed' }).where('campaign_id', '=', campaignId).execute();
  clock.set(Date.parse('2026-06-02T09:00:00Z'));
  expect((await runTick(deps, fence)).autoResumed).toBe(0);
});

test('a next_run_at written too early (an edit racing the tick) never causes an early run', async () => {
  const { campaignId } = await seed({ every: 60 });
  const fence = await repo.takeFence('me', new Date(clock.now()));
  await runTick(deps, fence);
  await db.updateTable('runs').set({ status: 'success' }).where('campaign_id', '=', campaignId).execute();
  // a stale writer puts the campaign back to 1 s after the occurrence that already ran
  await db
    .updateTable('campaigns')
    .set({ next_run_at: new Date(clock.now() + 1000) })
    .where('id', '=', campaignId)
    .execute();
  clock.advance(1500);
  expect(await runTick(deps, fence)).toMatchObject({ created: 0 });
  expect((await nextRunAt(campaignId))!.toISOString()).toBe('2026-06-01T09:01:00.000Z');
  clock.set(Date.parse('2026-06-01T09:01:00Z'));
  expect((await runTick(deps, fence)).created).toBe(1);
  expect((await runsOf(campaignId)).map((r) => r.scheduled_at.toISOString())).toEqual(['2026-06-01T09:00:00.000Z', '2026-06-01T09:01:00.000Z']);
});

test('reconciler: a run whose job failed (kept in Redis as failed) counts as having no job', async () => {
  const { campaignId } = await seed();
  const fence = await repo.takeFence('me', new Date(clock.now()));
  await runTick(deps, fence);
  const [run] = await runsOf(campaignId);
  // the job ends as failed in Redis, as BullMQ leaves a job that stalled too often
  const job = await queue.queue.getJob(run!.job_id!);
  await job!.promote().catch(() => undefined);
  const key = queue.queue.toKey(run!.job_id!);
  await redis.hset(key, 'finishedOn', String(Date.now()), 'failedReason', 'stalled');
  expect(await queue.existing([run!.job_id!])).toEqual(new Set());
  await db
    .updateTable('runs')
    .set({ updated_at: new Date(clock.now() - 60_000) })
    .where('id', '=', run!.id)
    .execute();
  const result = await reconcile({ repo, queue, clock, logger: deps.logger, metrics: deps.metrics, pausedRunTtlMs: 7 * 86_400_000 });
  expect(result.requeued).toBe(1);
  const moved = await db.selectFrom('runs').select(['job_id', 'job_seq']).where('id', '=', run!.id).executeTakeFirstOrThrow();
  expect(moved.job_seq).toBe(1);
  expect(await queue.existing([moved.job_id!])).toEqual(new Set([moved.job_id!]));
});
