import { sql, type Kysely } from 'kysely';
import type { DB } from '@metronome/db';
import { seedAccount, seedTenant } from '../helpers/seed.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-env.js';

// The account.status webhook's outbox rows (migrations/0008, 0021): the data names why an account
// is cooling, and a change of that reason while cooling is an event of its own. Real PostgreSQL.

let database: TestDatabase;
let db: Kysely<DB>;
beforeAll(async () => {
  database = await createTestDatabase('webhook_reason');
  db = database.db;
});
afterAll(() => database.drop());

test('cooling for flood waits, then restricted while still cooling, then lifted: three events, each with its reason', async () => {
  const tenantId = await seedTenant(db);
  const accountId = await seedAccount(db, tenantId);
  await sql`insert into webhooks (tenant_id, url, events, secret) values (${tenantId}::uuid, 'https://hooks.example.com/m', array['account.status'], '\\x00')`.execute(
    db,
  );
  const setAccount = (set: Record<string, unknown>) => db.updateTable('accounts').set(set).where('id', '=', accountId).execute();
  await setAccount({ status: 'cooling', cooling_reason: 'flood_waits', cooling_since: new Date(), cooling_until: new Date(Date.now() + 60_000) });
  await setAccount({ cooling_reason: 'restricted', cooling_until: null });
  // nothing changed that the event carries: no event
  await setAccount({ cooling_since: new Date() });
  await setAccount({ status: 'active', cooling_reason: null, cooling_since: null });
  const rows = await db.selectFrom('webhook_deliveries').select('payload').where('subject_id', '=', accountId).orderBy('seq').execute();
  const data = rows.map((r) => (r.payload as { data: { status: string; previousStatus: string; reason: string | null } }).data);
  expect(data.map(({ status, previousStatus, reason }) => ({ status, previousStatus, reason }))).toEqual([
    { status: 'cooling', previousStatus: 'active', reason: 'flood_waits' },
    { status: 'cooling', previousStatus: 'cooling', reason: 'restricted' },
    { status: 'active', previousStatus: 'cooling', reason: null },
  ]);
});
