import { sql, type Kysely } from 'kysely';
import { AudienceRepository, type DB } from '@metronome/db';
import { seedCampaignOfNewAccount } from '../helpers/seed.js';
import { createTestDatabase, eventually, type TestDatabase } from '../helpers/test-env.js';

// An audience deleted while a campaign naming it is being saved (CONTRACT §3, Audiences: a
// delete is a 409 while a live campaign names it). The save holds the audiences it names
// until its commit; the delete waits for it, then sees the campaign. Real PostgreSQL, two
// connections.

let database: TestDatabase;
let db: Kysely<DB>;
beforeAll(async () => {
  database = await createTestDatabase('audience_race');
  db = database.db;
});
afterAll(() => database.drop());

test('a delete that arrives while a save naming the audience is open waits for it, then refuses and names the campaign', async () => {
  const seeded = await seedCampaignOfNewAccount(db, {});
  const audience = await new AudienceRepository(db).create(seeded.tenantId, 'list', new Date());
  let deletion: ReturnType<AudienceRepository['delete']> | undefined;
  let settledBeforeCommit = false;
  await db.transaction().execute(async (trx) => {
    // the save: its audiences checked (and held), then the campaign written
    expect(await new AudienceRepository(trx).ownedIds(seeded.tenantId, [audience.id])).toEqual(new Set([audience.id]));
    deletion = new AudienceRepository(db).delete(audience.id, seeded.tenantId);
    void deletion.then(() => (settledBeforeCommit = true));
    // the delete has reached the save's lock: PostgreSQL shows its backend waiting on it
    await eventually(
      'the delete to wait on the lock the save holds',
      async () =>
        (
          await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and query ilike '%audiences%'`.execute(db)
        ).rows[0]!.n > 0,
      5_000,
      10,
    );
    await trx
      .updateTable('campaigns')
      .set({ audience_ids: [audience.id] })
      .where('id', '=', seeded.campaignId)
      .execute();
  });
  expect(settledBeforeCommit).toBe(false);
  expect(await deletion).toEqual({ deleted: false, namedBy: [{ id: seeded.campaignId, name: expect.any(String) }] });
  expect(await db.selectFrom('audiences').select('id').where('id', '=', audience.id).execute()).toHaveLength(1);
});

test('a save after the delete committed finds the audience gone', async () => {
  const seeded = await seedCampaignOfNewAccount(db, {});
  const audience = await new AudienceRepository(db).create(seeded.tenantId, 'gone', new Date());
  expect(await new AudienceRepository(db).delete(audience.id, seeded.tenantId)).toEqual({ deleted: true });
  expect(await new AudienceRepository(db).ownedIds(seeded.tenantId, [audience.id])).toEqual(new Set());
});
