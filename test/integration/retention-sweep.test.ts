import { randomUUID } from 'node:crypto';
import { ManualClock } from '@metronome/core';
import { countRuns, ErasureRepository, RetentionRepository, type RetentionPolicy } from '@metronome/db';
import { sql } from 'kysely';
import { retentionSweep, type SweptKind } from '../../services/scheduler/src/retention-sweep.js';
import { seedAccount, seedCampaign, seedTenant } from '../helpers/seed.js';
import { databasePerTest } from '../helpers/test-env.js';

// The retention sweep on real PostgreSQL with a manual clock: what goes when, a tenant's shorter
// retention, a sweep cut short (a restart) finished by the next, summaries after their own
// retention, settled webhook deliveries and unused media.

const DAY = 86_400_000;
const NOW = Date.parse('2031-03-01T00:00:00Z');
const POLICY: RetentionPolicy = { historyMs: 90 * DAY, summaryMs: 400 * DAY };
const database = databasePerTest('retention');

/** A run finished `daysAgo` (or open, with `status`), with `chats` targets: the first sent, the rest failed. */
async function run(owner: { tenantId: string; accountId: string; campaignId: string }, daysAgo: number, chats: number, status = 'success'): Promise<string> {
  const id = randomUUID();
  const at = new Date(NOW - daysAgo * DAY);
  const finished = ['success', 'partial', 'failed', 'cancelled'].includes(status);
  await database.db
    .insertInto('runs')
    .values({
      id,
      campaign_id: owner.campaignId,
      tenant_id: owner.tenantId,
      account_id: owner.accountId,
      trigger: 'schedule',
      status: status as 'success',
      parts: '[]',
      total: chats,
      scheduled_at: at,
      finished_at: finished ? at : null,
      paused_reason: status === 'paused' ? 'operator' : null,
    })
    .execute();
  const targets = Array.from({ length: chats }, (_, i) => ({ run_id: id, chat_id: `chat-${i}`, status: i === 0 ? ('sent' as const) : ('failed' as const) }));
  if (targets.length) await database.db.insertInto('run_targets').values(targets).execute();
  return id;
}

async function owner(retentionDays?: number) {
  const tenantId = await seedTenant(database.db, retentionDays === undefined ? {} : { history_retention_ms: retentionDays * DAY });
  const accountId = await seedAccount(database.db, tenantId);
  const campaignId = await seedCampaign(database.db, { tenantId, accountId });
  return { tenantId, accountId, campaignId };
}

const left = async (runId: string) =>
  (
    await sql<{ targets: number; events: number; run: number }>`select (select count(*) from run_targets where run_id = ${runId})::int as targets,
     (select count(*) from run_events where run_id = ${runId})::int as events, (select count(*) from runs where id = ${runId})::int as run`.execute(database.db)
  ).rows[0];

function sweep(clock: ManualClock, o: { batch?: number; stopAfter?: number } = {}) {
  const counted: Partial<Record<SweptKind, number>> = {};
  let statements = 0;
  const done = retentionSweep({
    retention: new RetentionRepository(database.db),
    erasure: new ErasureRepository(database.db),
    clock,
    policy: POLICY,
    batch: o.batch ?? 1000,
    pauseMs: 0,
    keepGoing: () => o.stopAfter === undefined || statements < o.stopAfter,
    counted: (kind, rows) => {
      statements++;
      counted[kind] = (counted[kind] ?? 0) + rows;
    },
  });
  return done.then(() => counted);
}

test('history past retention goes and its summary stays; newer, open and paused runs and a shorter tenant retention are respected', async () => {
  const clock = new ManualClock(NOW);
  const a = await owner();
  const short = await owner(30);
  const old = await run(a, 91, 5);
  const recent = await run(a, 89, 5);
  const paused = await run(a, 200, 3, 'paused');
  const shortOld = await run(short, 31, 2);
  const shortRecent = await run(short, 29, 2);
  // the sent chat was delivered, read and answered: the summary keeps those counts too
  for (const id of [old, recent]) {
    await sql`update run_targets set delivered_at = ${new Date(NOW)}, read_at = ${new Date(NOW)}, replied_at = ${new Date(NOW)} where run_id = ${id} and status = 'sent'`.execute(
      database.db,
    );
  }

  const counted = await sweep(clock);
  expect(counted).toEqual({ targets: 7, events: 2 });
  expect(await left(old)).toEqual({ targets: 0, events: 0, run: 1 });
  expect(await left(shortOld)).toEqual({ targets: 0, events: 0, run: 1 });
  for (const kept of [recent, paused, shortRecent]) expect((await left(kept))!.targets).toBeGreaterThan(0);
  // the summary: counts as they were, read from the run once its targets are gone
  const counts = await countRuns(database.db, [old, recent]);
  expect(counts.get(old)).toEqual({ total: 5, pending: 0, inFlight: 0, sent: 1, failed: 4, skipped: 0, unknown: 0, delivered: 1, read: 1, replied: 1 });
  expect(counts.get(recent)).toEqual(counts.get(old));

  // two days on, the runs kept then are due too
  clock.set(NOW + 2 * DAY);
  expect(await sweep(clock)).toEqual({ targets: 7, events: 2 });
  expect(await left(recent)).toEqual({ targets: 0, events: 0, run: 1 });
  // a summary goes RUN_SUMMARY_RETENTION after its run finished: not a day before
  clock.set(NOW + 308 * DAY);
  expect(await sweep(clock)).toEqual({});
  clock.set(NOW + 310 * DAY);
  expect(await sweep(clock)).toEqual({ runs: 1 });
  expect((await left(old))!.run).toBe(0);
  expect((await left(shortOld))!.run).toBe(1);
  expect((await left(paused))!.targets).toBe(3);
});

test('a sweep cut short after every statement is finished by the next, counts kept from before', async () => {
  const clock = new ManualClock(NOW);
  const a = await owner();
  const runs = [await run(a, 100, 7), await run(a, 120, 4)];
  let passes = 0;
  // one statement a pass, as if the scheduler restarted after each
  for (;;) {
    passes++;
    const counted = await sweep(clock, { batch: 2, stopAfter: 1 });
    if (Object.keys(counted).length === 0) break;
  }
  expect(passes).toBeGreaterThan(6);
  for (const id of runs) expect(await left(id)).toEqual({ targets: 0, events: 0, run: 1 });
  const counts = await countRuns(database.db, runs);
  expect(counts.get(runs[0]!)).toMatchObject({ total: 7, sent: 1, failed: 6 });
  expect(counts.get(runs[1]!)).toMatchObject({ total: 4, sent: 1, failed: 3 });
  const marked = await database.db.selectFrom('runs').select('history_purged_at').where('id', 'in', runs).execute();
  expect(marked.every((r) => r.history_purged_at !== null)).toBe(true);
});

test('settled webhook deliveries and media nothing uses follow the same clock; pending deliveries and used media stay', async () => {
  const clock = new ManualClock(NOW);
  const a = await owner();
  const webhook = await database.db
    .insertInto('webhooks')
    .values({ tenant_id: a.tenantId, url: 'https://hooks.example.com/x', events: ['run.status'], secret: Buffer.alloc(8) })
    .returning('id')
    .executeTakeFirstOrThrow();
  const old = new Date(NOW - 100 * DAY);
  for (const status of ['delivered', 'failed', 'pending'] as const) {
    await database.db
      .insertInto('webhook_deliveries')
      .values({ webhook_id: webhook.id, tenant_id: a.tenantId, type: 'run.status', subject_id: randomUUID(), payload: '{}', status, created_at: old })
      .execute();
  }
  const media = async () =>
    (
      await database.db
        .insertInto('media')
        .values({
          tenant_id: a.tenantId,
          content_type: 'image/png',
          size: 1,
          sha256: 'x',
          filename: null,
          bytes: Buffer.from([1]),
          storage_key: null,
          created_at: old,
        })
        .returning('id')
        .executeTakeFirstOrThrow()
    ).id;
  const [unused, used] = [await media(), await media()];
  await database.db
    .updateTable('campaigns')
    .set({ messages: JSON.stringify([{ type: 'media', mediaId: used }]) })
    .where('id', '=', a.campaignId)
    .execute();
  await database.db
    .insertInto('media_uploads')
    .values({ account_id: a.accountId, media_id: unused, ref: 'r', expires_at: new Date(NOW + DAY) })
    .execute();

  expect(await sweep(clock)).toEqual({ webhook_deliveries: 2, media: 1 });
  expect((await database.db.selectFrom('webhook_deliveries').select('status').execute()).map((d) => d.status)).toEqual(['pending']);
  expect((await database.db.selectFrom('media').select('id').execute()).map((m) => m.id)).toEqual([used]);
});
