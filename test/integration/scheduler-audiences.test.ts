import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ManualClock } from '@metronome/core';
import { AudienceMemberRepository, AudienceRepository, insertTestRun, type DB, type ScheduleRepository } from '@metronome/db';
import { runJobId } from '@metronome/queue';
import { runTick, type TickDeps } from '../../services/scheduler/src/tick.js';
import { schedulerTestbed, type SchedulerTestbed } from '../helpers/scheduler-testbed.js';
import { seedCampaignOfNewAccount } from '../helpers/seed.js';

// The scheduler's tick with audiences and test runs (migrations/0015): a tick's run takes the
// campaign's audience members beside its targets, gated per chat as targets are; an open test
// run holds no occurrence back. Real PostgreSQL and Redis, manual clock.

let bed: SchedulerTestbed;
let db: Kysely<DB>;
let clock: ManualClock;
let deps: TickDeps;
let repo: ScheduleRepository;
let fence: number;
const T0 = Date.parse('2026-06-01T09:00:00Z');

beforeEach(async () => {
  bed = await schedulerTestbed('sched_audiences', T0);
  ({ db, clock, repo, deps } = bed);
  fence = await repo.takeFence('me', new Date(T0));
});
afterEach(() => bed.close());

const runsOf = (campaignId: string) => db.selectFrom('runs').selectAll().where('campaign_id', '=', campaignId).orderBy('created_at').execute();
const gates = async (runId: string) =>
  Object.fromEntries(
    (await db.selectFrom('run_targets').select(['chat_id', 'next_attempt_at', 'vars']).where('run_id', '=', runId).orderBy('chat_id').execute()).map((t) => [
      t.chat_id,
      { at: t.next_attempt_at.getTime(), vars: t.vars },
    ]),
  );

async function withAudience(members: { chatId: string; vars: Record<string, string> | null }[]) {
  const seeded = await seedCampaignOfNewAccount(db, { campaign: { targets: ['a'], next_run_at: new Date(T0) } });
  const audience = await new AudienceRepository(db).create(seeded.tenantId, 'list', new Date(T0));
  await new AudienceMemberRepository(db).upsert(
    audience.id,
    members.map((m) => ({ ...m, search: m.chatId })),
    new Date(T0),
  );
  await db
    .updateTable('campaigns')
    .set({ audience_ids: [audience.id] })
    .where('id', '=', seeded.campaignId)
    .execute();
  return { ...seeded, audienceId: audience.id };
}

test("a tick's run takes the members beside the targets, and the per-chat interval holds member chats as it holds targets", async () => {
  const { campaignId, audienceId } = await withAudience([
    { chatId: 'a', vars: { name: 'A' } },
    { chatId: 'm', vars: { name: 'M' } },
  ]);
  expect((await runTick(deps, fence)).created).toBe(1);
  const [first] = await runsOf(campaignId);
  expect(first!.total).toBe(2);
  // `a` is also an inline target (a plain chat id): the target wins, without variables
  expect(await gates(first!.id)).toEqual({ a: { at: 0, vars: null }, m: { at: 0, vars: { name: 'M' } } });

  // m reached late (+50 s), then the next occurrence: m waits for its own interval
  await db
    .updateTable('run_targets')
    .set({ status: 'sent', sent_at: new Date(T0 + 50_000), parts_sent: 1 })
    .where('run_id', '=', first!.id)
    .execute();
  await db
    .updateTable('run_targets')
    .set({ sent_at: new Date(T0 + 1_000) })
    .where('run_id', '=', first!.id)
    .where('chat_id', '=', 'a')
    .execute();
  await db
    .updateTable('runs')
    .set({ status: 'success', finished_at: new Date(T0 + 50_000) })
    .where('id', '=', first!.id)
    .execute();
  await new AudienceMemberRepository(db).upsert(audienceId, [{ chatId: 'n', vars: null, search: 'n' }], new Date(T0 + 55_000));
  clock.set(T0 + 60_000);
  expect((await runTick(deps, fence)).created).toBe(1);
  const second = (await runsOf(campaignId))[1]!;
  expect(second.total).toBe(3);
  const g = await gates(second.id);
  expect(g['a']!.at).toBe(T0 + 61_000);
  expect(g['m']!.at).toBe(T0 + 110_000);
  expect(g['n']).toEqual({ at: 0, vars: null });
});

test('an open test run holds no occurrence back, and its delivery gates no chat', async () => {
  const { campaignId, tenantId, accountId } = await withAudience([]);
  const testId = randomUUID();
  await insertTestRun(
    db,
    {
      id: testId,
      campaignId,
      tenantId,
      accountId,
      parts: [{ type: 'text', text: 'hi' }],
      scheduledAt: new Date(T0),
      windowEndAt: null,
      jobId: runJobId(testId, 0),
    },
    'a',
    null,
  );
  // the test reached `a` and is still open (running) when the occurrence comes due
  await db
    .updateTable('run_targets')
    .set({ status: 'sent', sent_at: new Date(T0), parts_sent: 1 })
    .where('run_id', '=', testId)
    .execute();
  await db.updateTable('runs').set({ status: 'running' }).where('id', '=', testId).execute();
  expect((await runTick(deps, fence)).created).toBe(1);
  const scheduled = (await runsOf(campaignId)).find((r) => r.trigger === 'schedule')!;
  expect(scheduled.scheduled_at.getTime()).toBe(T0);
  expect(await gates(scheduled.id)).toEqual({ a: { at: 0, vars: null } });
});
