import { randomUUID } from 'node:crypto';
import { WhatsAppSentMessageRepository } from '@metronome/db';
import { countDbStatements } from '@metronome/observability';
import { seedAccount, seedTenant } from '../helpers/seed.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-env.js';

// The store of sent WhatsApp messages (for a device's decryption retry) is written once per
// message by every account a sender holds: the messages of all accounts sent meanwhile go in one
// statement while the one before it runs. Real PostgreSQL; statements counted as Kysely runs them.

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase('wa_sent_messages');
});
afterAll(() => tdb.drop());

test('sixty messages of three accounts asked at once: two statements, each kept, a message kept twice keeps the last', async () => {
  const tenantId = await seedTenant(tdb.db);
  const accounts = [await seedAccount(tdb.db, tenantId), await seedAccount(tdb.db, tenantId), await seedAccount(tdb.db, tenantId)];
  let statements = 0;
  const repo = new WhatsAppSentMessageRepository(countDbStatements(tdb.db, () => statements++));
  const at = new Date('2026-06-01T09:00:00Z');
  const asked = Array.from({ length: 60 }, (_, i) => ({ accountId: accounts[i % 3]!, messageId: `M${i}`, message: Buffer.from(`message ${i}`) }));
  // the first account's M0 again, later: the newer wins
  asked.push({ accountId: accounts[0]!, messageId: 'M0', message: Buffer.from('message 0, again') });
  await Promise.all(asked.map((m) => repo.remember(m.accountId, m.messageId, m.message, at)));

  // the first goes alone; the rest, asked while it ran, together
  expect(statements).toBe(2);
  const found = await Promise.all(asked.slice(1, 60).map((m) => repo.find(m.accountId, m.messageId, at)));
  expect(found.map((b) => b?.toString())).toEqual(asked.slice(1, 60).map((m) => m.message.toString()));
  expect((await repo.find(accounts[0]!, 'M0', at))?.toString()).toBe('message 0, again');
});

test('a message of an account deleted meanwhile is dropped, and the others in its statement are kept', async () => {
  const tenantId = await seedTenant(tdb.db);
  const kept = await seedAccount(tdb.db, tenantId);
  const repo = new WhatsAppSentMessageRepository(tdb.db);
  const at = new Date('2026-06-01T09:00:00Z');
  await Promise.all([
    repo.remember(kept, 'first', Buffer.from('a'), at),
    repo.remember(randomUUID(), 'gone', Buffer.from('b'), at),
    repo.remember(kept, 'second', Buffer.from('c'), at),
  ]);
  expect((await repo.find(kept, 'second', at))?.toString()).toBe('c');
  const rows = await tdb.db.selectFrom('whatsapp_sent_messages').select('message_id').where('message_id', 'in', ['first', 'gone', 'second']).execute();
  expect(rows.map((r) => r.message_id).sort()).toEqual(['first', 'second']);
});
