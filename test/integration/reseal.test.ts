import { isSealedWith, open, seal } from '@metronome/core';
import { resealSecrets, SealedSecretsRepository } from '@metronome/db';
import { reseal, resealEnv, resealFailure, rotationKeys } from '../helpers/reseal-kit.js';
import { seedAccount, seedTenant } from '../helpers/seed.js';
import { databasePerTest } from '../helpers/test-env.js';

// Key rotation: after SECRETS_KEY changes (the old key kept as SECRETS_KEY_PREVIOUS), every
// stored secret — Telegram bot tokens, account proxies and WhatsApp auth state — is re-sealed under the new key,
// on real PostgreSQL, by the function and by `npm run reseal` as a process.

const keys = rotationKeys();
const { OLD, NEW, STRANGER } = keys;

const tdb = databasePerTest('reseal');

async function account(credentials: Buffer | null, platform: 'telegram' | 'whatsapp' = 'telegram'): Promise<string> {
  return seedAccount(tdb.db, await seedTenant(tdb.db), { platform, external_id: null, credentials });
}

async function seedWorld() {
  const bots = await Promise.all(Array.from({ length: 7 }, (_, i) => account(seal(JSON.stringify({ botToken: `${i}:token-${i}` }), OLD))));
  const already = await account(seal(JSON.stringify({ botToken: 'new:one' }), NEW));
  const phone = await account(null, 'whatsapp');
  const authRows = Array.from({ length: 12 }, (_, i) => ({
    account_id: phone,
    kind: i === 0 ? 'creds' : 'session',
    key_id: i === 0 ? '' : `k${i}`,
    sealed: seal(`{"secret":${i}}`, OLD),
  }));
  await tdb.db.insertInto('whatsapp_auth').values(authRows).execute();
  // the account's proxy is a secret too (migrations/0035)
  await tdb.db
    .updateTable('accounts')
    .set({ proxy: seal('socks5://u:p@10.0.0.9:1080', OLD) })
    .where('id', '=', phone)
    .execute();
  return { bots, already, phone };
}

test('every credential and auth row ends up under the new key, with the same plaintext; a second pass does nothing', async () => {
  const { bots, already, phone } = await seedWorld();
  const repo = new SealedSecretsRepository(tdb.db);
  // a page smaller than the rows, so paging is exercised
  const report = await resealSecrets(repo, [NEW, OLD], 3);
  expect(report).toEqual({ resealed: { credentials: 7, proxies: 1, whatsappAuth: 12 }, raced: 0, unreadable: [] });

  const accounts = await tdb.db.selectFrom('accounts').select(['id', 'credentials']).where('credentials', 'is not', null).execute();
  for (const a of accounts) {
    expect(isSealedWith(a.credentials!, NEW)).toBe(true);
    // readable with the new key alone: the old one can be dropped
    const token = JSON.parse(open(a.credentials!, [NEW]).toString('utf8')).botToken;
    expect(token).toBe(a.id === already ? 'new:one' : `${bots.indexOf(a.id)}:token-${bots.indexOf(a.id)}`);
  }
  const auth = await tdb.db.selectFrom('whatsapp_auth').select(['key_id', 'sealed']).where('account_id', '=', phone).orderBy('key_id').execute();
  expect(auth).toHaveLength(12);
  for (const row of auth) expect(open(row.sealed, [NEW]).toString('utf8')).toBe(`{"secret":${row.key_id === '' ? 0 : Number(row.key_id.slice(1))}}`);
  const proxy = await tdb.db.selectFrom('accounts').select('proxy').where('id', '=', phone).executeTakeFirstOrThrow();
  expect(open(proxy.proxy!, [NEW]).toString('utf8')).toBe('socks5://u:p@10.0.0.9:1080');

  expect(await resealSecrets(repo, [NEW, OLD], 3)).toEqual({ resealed: { credentials: 0, proxies: 0, whatsappAuth: 0 }, raced: 0, unreadable: [] });
});

test('a row written meanwhile is left as written (compare-and-set), and a row under an unknown key is reported, untouched', async () => {
  const { bots } = await seedWorld();
  const lost = await account(seal('{"botToken":"x:y"}', STRANGER));
  const repo = new SealedSecretsRepository(tdb.db);
  // A service writes one credential under the new key between the read and the swap.
  const written = seal('{"botToken":"rotated:meanwhile"}', NEW);
  const racing: SealedSecretsRepository = Object.create(repo);
  racing.replaceCredentials = async (rows, column) => {
    if (column !== 'proxy') await tdb.db.updateTable('accounts').set({ credentials: written }).where('id', '=', bots[0]!).execute();
    return repo.replaceCredentials(rows, column);
  };
  const report = await resealSecrets(racing, [NEW, OLD]);
  expect(report.raced).toBe(1);
  expect(report.resealed.credentials).toBe(6);
  expect(report.unreadable).toEqual([{ table: 'accounts', accountId: lost }]);
  const kept = await tdb.db.selectFrom('accounts').select('credentials').where('id', '=', bots[0]!).executeTakeFirstOrThrow();
  expect(kept.credentials!.equals(written)).toBe(true);
  const stranger = await tdb.db.selectFrom('accounts').select('credentials').where('id', '=', lost).executeTakeFirstOrThrow();
  expect(isSealedWith(stranger.credentials!, STRANGER)).toBe(true);
});

test('`npm run reseal` as a process: re-seals, says what it did, and exits 1 naming the accounts it could not open', async () => {
  const { bots } = await seedWorld();
  const env = resealEnv(tdb.url, keys);
  const ok = await reseal(env);
  expect(ok.stdout).toContain('7 account credentials, 1 account proxies and 12 WhatsApp auth rows re-sealed under SECRETS_KEY');
  const row = await tdb.db.selectFrom('accounts').select('credentials').where('id', '=', bots[3]!).executeTakeFirstOrThrow();
  expect(isSealedWith(row.credentials!, NEW)).toBe(true);

  const lost = await account(seal('{"botToken":"x:y"}', STRANGER));
  const failed = await resealFailure(env);
  expect(failed?.code).toBe(1);
  expect(failed?.stderr).toContain(lost);
  expect(failed?.stderr).toContain('set SECRETS_KEY_PREVIOUS to the key they were sealed with');

  const missing = await resealFailure({ ...env, SECRETS_KEY: '' });
  expect(missing?.code).toBe(2);
  expect(missing?.stderr).toContain('SECRETS_KEY');
  expect(missing?.stderr).toContain('openssl rand -hex 32');
});
