import type { Kysely } from 'kysely';
import type { ManualClock } from '@metronome/core';
import { RunControlRepository, type DB, type ScheduleRepository } from '@metronome/db';
import { runTick, type TickDeps } from '../../services/scheduler/src/tick.js';
import { schedulerTestbed, type SchedulerTestbed } from '../helpers/scheduler-testbed.js';
import { seedCampaignOfNewAccount } from '../helpers/seed.js';

// The per-chat interval gate (migrations/0002): no chat receives an interval campaign twice less
// than everySeconds apart, whatever happened to the runs. Real PostgreSQL and Redis, manual clock.

let bed: SchedulerTestbed;
let db: Kysely<DB>;
let clock: ManualClock;
let deps: TickDeps;
let repo: ScheduleRepository;
let fence: number;
const T0 = Date.parse('2026-06-01T09:00:00Z');

beforeEach(async () => {
  bed = await schedulerTestbed('gate', T0);
  ({ db, clock, repo, deps } = bed);
  fence = await repo.takeFence('me', new Date(T0));
});
afterEach(() => bed.close());

async function seed(schedule: object = { type: 'interval', everySeconds: 60 }) {
  const { campaignId } = await seedCampaignOfNewAccount(db, {
    campaign: { schedule: JSON.stringify(schedule), targets: ['a', 'b', 'c'], next_run_at: new Date(T0) },
  });
  return campaignId;
}

const runsOf = (campaignId: string) => db.selectFrom('runs').selectAll().where('campaign_id', '=', campaignId).orderBy('scheduled_at').execute();
const gates = async (runId: string) =>
  Object.fromEntries(
    (await db.selectFrom('run_targets').select(['chat_id', 'next_attempt_at']).where('run_id', '=', runId).orderBy('chat_id').execute()).map((t) => [
      t.chat_id,
      t.next_attempt_at.getTime(),
    ]),
  );
const deliver = (runId: string, chat: string, at: number) =>
  db
    .updateTable('run_targets')
    .set({ status: 'sent', sent_at: new Date(at), parts_sent: 1, updated_at: new Date(at) })
    .where('run_id', '=', runId)
    .where('chat_id', '=', chat)
    .execute();
const finish = (runId: string, status: 'success' | 'partial', at: number) =>
  db
    .updateTable('runs')
    .set({ status, finished_at: new Date(at), updated_at: new Date(at) })
    .where('id', '=', runId)
    .execute();

test('a slow run: each chat of the next run waits for its own last delivery plus everySeconds', async () => {
  const campaignId = await seed();
  await runTick(deps, fence);
  const [first] = await runsOf(campaignId);
  expect(Object.values(await gates(first!.id)).every((t) => t <= T0)).toBe(true);
  // a slow run: chat a at +1 s, b at +40 s, c at +90 s (past the next occurrence)
  await deliver(first!.id, 'a', T0 + 1_000);
  await deliver(first!.id, 'b', T0 + 40_000);
  await deliver(first!.id, 'c', T0 + 90_000);
  await finish(first!.id, 'success', T0 + 90_000);
  clock.set(T0 + 90_500);
  expect((await runTick(deps, fence)).created).toBe(1);
  const second = (await runsOf(campaignId))[1]!;
  expect(second.scheduled_at.getTime()).toBe(T0 + 60_000); // due since +60 s: starts now, on its grid point
  const g = await gates(second.id);
  expect(g['a']).toBe(T0 + 61_000);
  expect(g['b']).toBe(T0 + 100_000);
  expect(g['c']).toBe(T0 + 150_000);
});

test('a chat whose send is still in flight in a paused run is gated on its lease; unknown and part-delivered chats count as reached', async () => {
  const campaignId = await seed();
  await runTick(deps, fence);
  const [first] = await runsOf(campaignId);
  const lease = T0 + 70_000;
  await db
    .updateTable('run_targets')
    .set({ status: 'in_flight', lease_owner: 'x', lease_expires_at: new Date(lease) })
    .where('run_id', '=', first!.id)
    .where('chat_id', '=', 'a')
    .execute();
  await db
    .updateTable('run_targets')
    .set({ status: 'unknown', updated_at: new Date(T0 + 5_000) })
    .where('run_id', '=', first!.id)
    .where('chat_id', '=', 'b')
    .execute();
  await db
    .updateTable('run_targets')
    .set({ status: 'pending', parts_sent: 1, updated_at: new Date(T0 + 7_000) })
    .where('run_id', '=', first!.id)
    .where('chat_id', '=', 'c')
    .execute();
  await db.updateTable('runs').set({ status: 'paused', paused_reason: 'operator' }).where('id', '=', first!.id).execute();
  clock.set(T0 + 60_000);
  expect((await runTick(deps, fence)).created).toBe(1);
  const g = await gates((await runsOf(campaignId))[1]!.id);
  expect(g).toEqual({ a: lease + 60_000, b: T0 + 65_000, c: T0 + 67_000 });
});

test('resume and retry-failed re-gate the pending targets on what the campaign delivered meanwhile', async () => {
  const campaignId = await seed();
  await runTick(deps, fence);
  const [first] = await runsOf(campaignId);
  await deliver(first!.id, 'a', T0 + 1_000);
  await db.updateTable('runs').set({ status: 'paused', paused_reason: 'window_closed' }).where('id', '=', first!.id).execute();
  // the next occurrence runs while the first is paused, and reaches b and c
  clock.set(T0 + 60_000);
  await runTick(deps, fence);
  const second = (await runsOf(campaignId))[1]!;
  await deliver(second.id, 'b', T0 + 61_000);
  await db.updateTable('run_targets').set({ status: 'failed', error_code: 'forbidden' }).where('run_id', '=', second.id).where('chat_id', '=', 'a').execute();
  await deliver(second.id, 'c', T0 + 62_000);
  await finish(second.id, 'partial', T0 + 62_000);
  // the operator resumes the first run: b and c must wait a full interval after the second run
  const control = new RunControlRepository(db);
  const now = new Date(T0 + 63_000);
  expect(await control.resume(first!.id, null, { expectedSeq: 0, windowEndAt: null, now })).toBeTruthy();
  const g = await gates(first!.id);
  expect(g['b']).toBe(T0 + 121_000);
  expect(g['c']).toBe(T0 + 122_000);
  await deliver(first!.id, 'b', T0 + 121_000);
  await deliver(first!.id, 'c', T0 + 122_000);
  await finish(first!.id, 'success', T0 + 122_000);
  // retry-failed on the second run: a was reached by the first run at +1 s, long enough ago;
  // nothing else is pending
  const retried = await control.retryFailed(second.id, null, { expectedSeq: 0, windowEndAt: null, now: new Date(T0 + 130_000) });
  expect(retried).toBeTruthy();
  expect((await gates(second.id))['a']).toBe(T0 + 61_000);
});

test('cron and once campaigns are not gated', async () => {
  const campaignId = await seed({ type: 'cron', expression: '* * * * *' });
  await runTick(deps, fence);
  const [first] = await runsOf(campaignId);
  await deliver(first!.id, 'a', T0 + 30_000);
  await finish(first!.id, 'success', T0 + 30_000);
  clock.set(T0 + 60_000);
  await runTick(deps, fence);
  const second = (await runsOf(campaignId))[1]!;
  expect((await gates(second.id))['a']).toBe(0);
});
