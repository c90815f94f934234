import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { ManualClock } from '@metronome/core';
import { ScheduleRepository, StaleFenceError, type DB } from '@metronome/db';
import type { Kysely } from 'kysely';
import { createLogger, Metrics } from '@metronome/observability';
import { RunQueue } from '@metronome/queue';
import { createRedis, redisKeys } from '@metronome/redis';
import { runTick, type TickDeps } from '../../services/scheduler/src/tick.js';
import { reconcile } from '../../services/scheduler/src/reconcile.js';
import { createTestDatabase, REDIS_URL, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';

// The scheduler's tick and reconciler on real PostgreSQL and Redis, with a manual clock.

let tdb: TestDatabase;
let db: Kysely<DB>;
let redis: Redis;
let queue: RunQueue;
let clock: ManualClock;
let deps: TickDeps;
let repo: ScheduleRepository;

beforeEach(async () => {
  tdb = await createTestDatabase('sched');
  db = tdb.db;
  redis = createRedis(REDIS_URL, 'test-sched');
  queue = new RunQueue(redis, redisKeys(uniquePrefix('sched')).queuePrefix);
  clock = new ManualClock(Date.parse('2026-06-01T09:00:00Z'));
  repo = new ScheduleRepository(db);
  deps = { repo, queue, clock, logger: createLogger('test', 'silent'), metrics: new Metrics('test'), batch: 500, jitterMs: 0, lookaheadMs: 0 };
});
afterEach(async () => {
  await queue.queue.obliterate({ force: true });
  await queue.close();
  await redis.quit();
  await tdb.drop();
});

async function seed(opts: { accountStatus?: 'active' | 'disabled'; blockedUntil?: Date; window?: [string, string]; every?: number; nextRunAt?: Date; targets?: string[]; timezone?: string } = {}) {
  const tenant = await db.insertInto('tenants').values({ name: 't', token_hash: randomUUID() }).returning('id').executeTakeFirstOrThrow();
  const account = await db
    .insertInto('accounts')
    .values({ tenant_id: tenant.id, platform: 'http', name: 'a', external_id: 'x', credentials: null, max_send_per_minute: null, group_concurrency: null, status: opts.accountStatus ?? 'active', blocked_until: opts.blockedUntil ?? null })
    .returning('id')
    .executeTakeFirstOrThrow();
  const campaign = await db
    .insertInto('campaigns')
    .values({
      tenant_id: tenant.id,
      account_id: account.id,
      name: 'c',
      timezone: opts.timezone ?? 'UTC',
      schedule: JSON.stringify({ type: 'interval', everySeconds: opts.every ?? 60 }),
      window_start: opts.window?.[0] ?? '00:00',
      window_end: opts.window?.[1] ?? '24:00',
      messages: JSON.stringify([{ type: 'text', text: 'hi' }]),
      targets: opts.targets ?? ['a', 'b', 'c'],
      next_run_at: opts.nextRunAt ?? new Date(clock.now()),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { tenantId: tenant.id, accountId: account.id, campaignId: campaign.id };
}

const runsOf = (campaignId: string) => db.selectFrom('runs').selectAll().where('campaign_id', '=', campaignId).orderBy('scheduled_at').execute();
const nextRunAt = async (campaignId: string) => (await db.selectFrom('campaigns').select('next_run_at').where('id', '=', campaignId).executeTakeFirstOrThrow()).next_run_at;

test('a due campaign becomes one run with its targets and one job, and moves to its next occurrence', async () => {
  const { campaignId } = await seed();
  const fence = await repo.takeFence('me', new Date(clock.now()));
  expect(await runTick(deps, fence)).toEqual({ created: 1, waitingForWindow: 0, noAccount: 0 });
  const [run] = await runsOf(campaignId);
  expect(run).toMatchObject({ status: 'queued', trigger: 'schedule', total: 3, window_end_at: null });
  expect(run!.scheduled_at.toISOString()).toBe('2026-06-01T09:00:00.000Z');
  const targets = await db.selectFrom('run_targets').select(['chat_id', 'status']).where('run_id', '=', run!.id).orderBy('chat_id').execute();
  expect(targets).toEqual([{ chat_id: 'a', status: 'pending' }, { chat_id: 'b', status: 'pending' }, { chat_id: 'c', status: 'pending' }]);
  expect(await queue.queue.getJob(run!.job_id!)).toBeTruthy();
  expect((await nextRunAt(campaignId))!.toISOString()).toBe('2026-06-01T09:01:00.000Z');
  // the same tick again creates nothing: the next occurrence is not due
  expect((await runTick(deps, fence)).created).toBe(0);
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
  expect(await runTick(deps, fence)).toEqual({ created: 0, waitingForWindow: 1, noAccount: 0 });
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
  expect(await runTick(deps, fence)).toEqual({ created: 0, waitingForWindow: 0, noAccount: 2 });
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

test('reconciler: a run whose job vanished from Redis is re-enqueued under the same id; expired leases become unknown', async () => {
  const { campaignId } = await seed();
  const fence = await repo.takeFence('me', new Date(clock.now()));
  await runTick(deps, fence);
  const [run] = await runsOf(campaignId);
  await queue.queue.obliterate({ force: true });
  expect(await queue.queue.getJob(run!.job_id!)).toBeUndefined();
  await db.updateTable('run_targets').set({ status: 'in_flight', lease_owner: 'dead', lease_expires_at: new Date(clock.now() + 1000) }).where('run_id', '=', run!.id).where('chat_id', '=', 'a').execute();
  await db.updateTable('runs').set({ updated_at: new Date(clock.now() - 60_000) }).where('id', '=', run!.id).execute();
  clock.advance(2000);
  const result = await reconcile({ repo, queue, clock, logger: deps.logger, metrics: deps.metrics, pausedRunTtlMs: 7 * 86_400_000 });
  expect(result).toMatchObject({ requeued: 1, expiredLeases: 1 });
  expect(await queue.queue.getJob(run!.job_id!)).toBeTruthy();
  const a = await db.selectFrom('run_targets').select(['status', 'error_code']).where('run_id', '=', run!.id).where('chat_id', '=', 'a').executeTakeFirstOrThrow();
  expect(a).toEqual({ status: 'unknown', error_code: 'lease_expired' });
  // a second pass finds the job alive and adds nothing
  expect((await reconcile({ repo, queue, clock, logger: deps.logger, metrics: deps.metrics, pausedRunTtlMs: 7 * 86_400_000 })).requeued).toBe(0);
});
