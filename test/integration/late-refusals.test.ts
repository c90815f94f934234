import type { Kysely } from 'kysely';
import { LateRefusalRepository, type DB } from '@metronome/db';
import { seedCampaignOfNewAccount, seedRun } from '../helpers/seed.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-env.js';

// A message the platform refused after taking it (WhatsApp's ERROR ack, libs/db late-refusals):
// its target moves from sent, and a run that had finished `success` is `partial`. Real PostgreSQL.

let database: TestDatabase;
let db: Kysely<DB>;
beforeAll(async () => {
  database = await createTestDatabase('late_refusals');
  db = database.db;
});
afterAll(() => database.drop());

async function finishedRun(status: 'success' | 'running') {
  const seeded = await seedCampaignOfNewAccount(db, { campaign: { targets: ['a', 'b'] } });
  const runId = await seedRun(db, { ...seeded, parts: [{ type: 'text', text: 'hi' }], scheduledAt: new Date() });
  await db.updateTable('run_targets').set({ status: 'sent', sent_at: new Date(), parts_sent: 1 }).where('run_id', '=', runId).execute();
  await db
    .updateTable('run_targets')
    .set({ message_ids: ['m-a'] })
    .where('run_id', '=', runId)
    .where('chat_id', '=', 'a')
    .execute();
  await db
    .updateTable('runs')
    .set({ status, ...(status === 'success' && { finished_at: new Date() }) })
    .where('id', '=', runId)
    .execute();
  return { ...seeded, runId };
}

test('a refusal of a finished success run moves its target to failed and the run to partial, with a run event', async () => {
  const { accountId, runId } = await finishedRun('success');
  const moved = await new LateRefusalRepository(db).refuse(accountId, 'a', 'm-a', 'failed', 'account_restricted', 'restricted', new Date());
  expect(moved).toEqual([runId]);
  expect(await db.selectFrom('run_targets').select(['chat_id', 'status', 'error_code']).where('run_id', '=', runId).orderBy('chat_id').execute()).toEqual([
    { chat_id: 'a', status: 'failed', error_code: 'account_restricted' },
    { chat_id: 'b', status: 'sent', error_code: null },
  ]);
  expect((await db.selectFrom('runs').select('status').where('id', '=', runId).executeTakeFirstOrThrow()).status).toBe('partial');
  const events = await db.selectFrom('run_events').select('status').where('run_id', '=', runId).orderBy('id').execute();
  expect(events.at(-1)?.status).toBe('partial');
});

test('a refusal in a running run moves only the target (the run ends by its counts); another message id or account moves nothing', async () => {
  const { accountId, runId } = await finishedRun('running');
  expect(await new LateRefusalRepository(db).refuse(accountId, 'a', 'm-other', 'failed', 'x', 'x', new Date())).toEqual([]);
  const other = await finishedRun('running');
  expect(await new LateRefusalRepository(db).refuse(other.accountId, 'a', 'm-a', 'failed', 'x', 'x', new Date())).toEqual([other.runId]);
  expect(await new LateRefusalRepository(db).refuse(accountId, 'a', 'm-a', 'unknown', 'ack_error_500', 'x', new Date())).toEqual([runId]);
  expect((await db.selectFrom('runs').select('status').where('id', '=', runId).executeTakeFirstOrThrow()).status).toBe('running');
});
