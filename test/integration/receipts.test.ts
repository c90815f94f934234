import type { Kysely } from 'kysely';
import { ReceiptRepository, type DB } from '@metronome/db';
import { seedCampaignOfNewAccount, seedRun } from '../helpers/seed.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-env.js';

// Receipts onto targets (libs/db ReceiptRepository), real PostgreSQL: times only move earlier,
// another account's receipt changes nothing, and the `message.status` webhook gets one delivery
// per run with the targets the write moved.

let database: TestDatabase;
let db: Kysely<DB>;
beforeAll(async () => {
  database = await createTestDatabase('receipts');
  db = database.db;
});
afterAll(() => database.drop());

async function sentRun(prefix = 'm') {
  const seeded = await seedCampaignOfNewAccount(db, { campaign: { targets: ['a', 'b'] } });
  const runId = await seedRun(db, { ...seeded, parts: [{ type: 'text', text: 'hi' }], scheduledAt: new Date() });
  await db
    .updateTable('run_targets')
    .set({ status: 'sent', sent_at: new Date('2026-01-01T10:00:00Z'), parts_sent: 1 })
    .where('run_id', '=', runId)
    .execute();
  for (const chat of ['a', 'b'])
    await db
      .updateTable('run_targets')
      .set({ message_ids: [`${prefix}-${chat}`] })
      .where('run_id', '=', runId)
      .where('chat_id', '=', chat)
      .execute();
  return { ...seeded, runId };
}

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 10, minute));

test('late, twice and out of order: the earliest time stays; a read is a delivery; another account changes nothing; one message.status delivery per run', async () => {
  const { tenantId, accountId, runId } = await sentRun();
  await db
    .insertInto('webhooks')
    .values({ tenant_id: tenantId, url: 'https://hooks.example.com/r', events: ['message.status'], secret: Buffer.from('x') })
    .execute();
  const repo = new ReceiptRepository(db);

  const first = await repo.record(accountId, [
    { messageId: 'm-a', chatId: 'a', status: 'read', at: at(9) },
    { messageId: 'm-a', chatId: 'a', status: 'delivered', at: at(5) },
    { messageId: 'm-b', chatId: 'b', status: 'delivered', at: at(7) },
    { messageId: 'm-zzz', chatId: 'a', status: 'delivered', at: at(1) },
  ]);
  expect(first.matched).toEqual([true, true, true, false]);
  // later copies and later times move nothing
  const again = await repo.record(accountId, [
    { messageId: 'm-a', chatId: 'a', status: 'delivered', at: at(30) },
    { messageId: 'm-b', chatId: 'b', status: 'delivered', at: at(7) },
  ]);
  expect(again.changed).toEqual([]);
  // another account's receipt for this account's message: nothing
  const other = await sentRun('o');
  const forged = await repo.record(other.accountId, [{ messageId: 'm-b', chatId: 'b', status: 'read', at: at(2) }]);
  expect(forged.matched).toEqual([false]);

  const rows = await db.selectFrom('run_targets').select(['chat_id', 'delivered_at', 'read_at']).where('run_id', '=', runId).orderBy('chat_id').execute();
  expect(rows).toEqual([
    { chat_id: 'a', delivered_at: at(5), read_at: at(9) },
    { chat_id: 'b', delivered_at: at(7), read_at: null },
  ]);
  const hooks = await db.selectFrom('webhook_deliveries').select(['type', 'subject_id', 'payload']).where('tenant_id', '=', tenantId).execute();
  expect(hooks).toHaveLength(1);
  expect(hooks[0]).toMatchObject({
    type: 'message.status',
    subject_id: runId,
    payload: {
      type: 'message.status',
      data: {
        runId,
        accountId,
        targets: [
          { chatId: 'a', deliveredAt: at(5).toISOString(), readAt: at(9).toISOString(), deliveredTo: null, readBy: null, memberCount: null },
          { chatId: 'b', deliveredAt: at(7).toISOString(), readAt: null, deliveredTo: null, readBy: null, memberCount: null },
        ],
      },
    },
  });
});

test('several accounts in one write (the API group commit): each submission its own outcome, a forged receipt among them matches nothing, a target moved twice is changed once', async () => {
  const a = await sentRun('ga');
  const b = await sentRun('gb');
  const repo = new ReceiptRepository(db);
  const [fromA, forged, againA, fromB] = await repo.recordMany([
    { accountId: a.accountId, receipts: [{ messageId: 'ga-a', chatId: 'a', status: 'delivered', at: at(5) }] },
    // b's key naming a's message: nothing, though a's own receipts go in the same transaction
    { accountId: b.accountId, receipts: [{ messageId: 'ga-b', chatId: 'b', status: 'read', at: at(1) }] },
    {
      accountId: a.accountId,
      receipts: [
        { messageId: 'ga-a', chatId: 'a', status: 'read', at: at(8) },
        { messageId: 'gb-a', chatId: 'a', status: 'read', at: at(2) },
      ],
    },
    { accountId: b.accountId, receipts: [{ messageId: 'gb-b', chatId: 'b', status: 'read', at: at(3) }] },
  ]);
  expect(fromA!.matched).toEqual([true]);
  expect(forged).toEqual({ matched: [false], changed: [] });
  expect(againA!.matched).toEqual([true, false]);
  // a's target a, moved by two submissions, is told once (its metrics and first delivery count once)
  expect(fromA!.changed).toEqual([
    expect.objectContaining({ runId: a.runId, chatId: 'a', deliveredAt: at(5), readAt: at(8), firstDelivered: true, firstRead: true }),
  ]);
  expect(againA!.changed).toEqual([]);
  expect(fromB!.changed).toEqual([expect.objectContaining({ runId: b.runId, chatId: 'b', deliveredAt: at(3), readAt: at(3), firstDelivered: true })]);
  const rows = await db
    .selectFrom('run_targets')
    .select(['run_id', 'chat_id', 'delivered_at', 'read_at'])
    .where('run_id', 'in', [a.runId, b.runId])
    .orderBy('chat_id')
    .execute();
  expect(rows.filter((r) => r.run_id === a.runId)).toEqual([
    { run_id: a.runId, chat_id: 'a', delivered_at: at(5), read_at: at(8) },
    { run_id: a.runId, chat_id: 'b', delivered_at: null, read_at: null },
  ]);
  expect(rows.filter((r) => r.run_id === b.runId)).toEqual([
    { run_id: b.runId, chat_id: 'a', delivered_at: null, read_at: null },
    { run_id: b.runId, chat_id: 'b', delivered_at: at(3), read_at: at(3) },
  ]);
  // both accounts are known to tell receipts now
  const seen = await db.selectFrom('accounts').select(['id', 'receipts_seen_at']).where('id', 'in', [a.accountId, b.accountId]).execute();
  expect(seen.every((s) => s.receipts_seen_at !== null)).toBe(true);
});
