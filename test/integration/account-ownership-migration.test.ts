import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createScratchDatabase, type ScratchDatabase } from '@metronome/testkit';
import { migrate, MIGRATIONS_DIR } from '../../libs/db/src/index.js';
import { DATABASE_URL } from '../helpers/urls.js';

// migrations/0005_account_ownership.sql on a database that already has clashing externalIds and
// keyless http accounts, applied by two migrators at once, as two services starting together do.

let scratch: ScratchDatabase;
let before: string;
let client: pg.Client;
beforeAll(async () => {
  // The migrations before 0005 only, to build the old state.
  before = await mkdtemp(path.join(os.tmpdir(), 'mtr-migrations-'));
  for (const f of (await readdir(MIGRATIONS_DIR)).filter((f) => f < '0005')) await copyFile(path.join(MIGRATIONS_DIR, f), path.join(before, f));
  scratch = await createScratchDatabase(DATABASE_URL, 'ownership_migration', 'template0');
  await migrate(scratch.url, before);
  client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
}, 30_000);
afterAll(async () => {
  await client?.end();
  await scratch?.drop();
  await rm(before, { recursive: true, force: true });
});

test('the oldest account keeps a clashing externalId, later ones are disabled and renamed; keyless http accounts are disconnected; two migrators at once', async () => {
  const tenant = async (name: string) =>
    (await client.query<{ id: string }>(`insert into tenants (name, token_hash) values ($1, md5($1)) returning id`, [name])).rows[0]!.id;
  const [a, c] = [await tenant('A'), await tenant('C')];
  const account = async (tenantId: string, externalId: string, createdAt: string, credentials: Buffer | null, platform = 'http') =>
    (
      await client.query<{ id: string }>(
        `insert into accounts (tenant_id, platform, name, external_id, credentials, created_at) values ($1, $2, 'x', $3, $4, $5) returning id`,
        [tenantId, platform, externalId, credentials, createdAt],
      )
    ).rows[0]!.id;
  const key = Buffer.from('sealed');
  const original = await account(a, 'shop', '2030-01-01T00:00:00Z', key);
  const copy = await account(c, 'shop', '2030-01-02T00:00:00Z', key);
  const sameTenantCopy = await account(a, 'shop', '2030-01-03T00:00:00Z', key);
  const keyless = await account(c, 'solo', '2030-01-01T00:00:00Z', null);
  const otherPlatform = await account(c, 'shop', '2030-01-04T00:00:00Z', key, 'telegram');

  const results = await Promise.all([migrate(scratch.url, MIGRATIONS_DIR), migrate(scratch.url, MIGRATIONS_DIR)]);
  // two migrators at once: 0005 and every later migration applied exactly once between them
  const fromHere = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f) && f >= '0005').sort();
  expect(results.flatMap((r) => r.applied).sort()).toEqual(fromHere);
  expect(fromHere[0]).toBe('0005_account_ownership.sql');

  const rows = new Map(
    (await client.query<{ id: string; external_id: string; status: string }>('select id, external_id, status from accounts')).rows.map((r) => [r.id, r]),
  );
  expect(rows.get(original)).toMatchObject({ external_id: 'shop', status: 'active' });
  expect(rows.get(copy)).toMatchObject({ external_id: `shop~duplicate-${copy}`, status: 'disabled' });
  expect(rows.get(sameTenantCopy)).toMatchObject({ external_id: `shop~duplicate-${sameTenantCopy}`, status: 'disabled' });
  expect(rows.get(keyless)).toMatchObject({ external_id: 'solo', status: 'disconnected' });
  expect(rows.get(otherPlatform)).toMatchObject({ external_id: 'shop', status: 'active' });

  // from now on the database itself refuses a second holder
  await expect(client.query(`insert into accounts (tenant_id, platform, name, external_id) values ($1, 'http', 'x', 'shop')`, [c])).rejects.toMatchObject({
    code: '23505',
    constraint: 'accounts_platform_external_id_key',
  });
});
