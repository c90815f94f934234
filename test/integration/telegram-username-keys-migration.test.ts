import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createScratchDatabase, type ScratchDatabase } from '@metronome/testkit';
import { migrate, MIGRATIONS_DIR } from '../../libs/db/src/index.js';
import { DATABASE_URL } from '../helpers/urls.js';

// migrations/0044_telegram_username_keys.sql on suppressions written before it: a telegram_user
// account's usernames listed in several spellings become one key each; other platforms' untouched.

let scratch: ScratchDatabase;
let before: string;
let client: pg.Client;
beforeAll(async () => {
  before = await mkdtemp(path.join(os.tmpdir(), 'mtr-migrations-'));
  for (const f of (await readdir(MIGRATIONS_DIR)).filter((f) => f < '0044')) await copyFile(path.join(MIGRATIONS_DIR, f), path.join(before, f));
  scratch = await createScratchDatabase(DATABASE_URL, 'username_keys_migration', 'template0');
  await migrate(scratch.url, before);
  client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
}, 60_000);
afterAll(async () => {
  await client?.end();
  await scratch?.drop();
  await rm(before, { recursive: true, force: true });
});

test("a telegram_user account's usernames listed in any spelling become their key, the earliest listing's reason kept; other platforms untouched", async () => {
  const tenant = (await client.query<{ id: string }>(`insert into tenants (name, token_hash) values ('t', md5('t')) returning id`)).rows[0]!.id;
  const account = async (platform: string) =>
    (await client.query<{ id: string }>(`insert into accounts (tenant_id, platform, name) values ($1, $2, 'x') returning id`, [tenant, platform])).rows[0]!.id;
  const [tg, listedKey, wa] = [await account('telegram_user'), await account('telegram_user'), await account('whatsapp')];
  const list = async (accountId: string, rows: [string, string, string][]) => {
    for (const [chat, reason, at] of rows)
      await client.query('insert into account_suppressions (account_id, chat_id, reason, created_at) values ($1, $2, $3, $4)', [accountId, chat, reason, at]);
  };
  await list(tg, [
    ['@Friend_One', 'operator', '2030-01-02T00:00:00Z'],
    ['friend_one', 'opt_out', '2030-01-01T00:00:00Z'],
    ['Friend_One', 'opt_out', '2030-01-01T00:00:00Z'],
    ['555', 'opt_out', '2030-01-01T00:00:00Z'],
    ['Other_Guy', 'user_is_blocked', '2030-01-03T00:00:00Z'],
    ['-100123', 'operator', '2030-01-03T00:00:00Z'],
  ]);
  await list(listedKey, [
    ['@friend_one', 'operator', '2030-01-05T00:00:00Z'],
    ['@FRIEND_ONE', 'opt_out', '2030-01-01T00:00:00Z'],
  ]);
  await list(wa, [
    ['@Friend_One', 'operator', '2030-01-01T00:00:00Z'],
    ['60123@s.whatsapp.net', 'opt_out', '2030-01-01T00:00:00Z'],
  ]);

  expect((await migrate(scratch.url, MIGRATIONS_DIR)).applied[0]).toBe('0044_telegram_username_keys.sql');
  const rows = async (accountId: string) =>
    (
      await client.query<{ chat_id: string; reason: string; at: string }>(
        `select chat_id, reason, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as at from account_suppressions where account_id = $1 order by chat_id collate "C"`,
        [accountId],
      )
    ).rows.map((r) => `${r.chat_id} ${r.reason} ${r.at}`);
  expect(await rows(tg)).toEqual([
    '-100123 operator 2030-01-03',
    '555 opt_out 2030-01-01',
    '@friend_one opt_out 2030-01-01',
    '@other_guy user_is_blocked 2030-01-03',
  ]);
  // a key already listed keeps its reason
  expect(await rows(listedKey)).toEqual(['@friend_one operator 2030-01-05']);
  expect(await rows(wa)).toEqual(['60123@s.whatsapp.net opt_out 2030-01-01', '@Friend_One operator 2030-01-01']);
});
