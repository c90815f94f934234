import { isSealedWith, newWebhookSecret, open, seal } from '@metronome/core';
import { resealWebhookSecrets, WebhookRepository } from '@metronome/db';
import { reseal, resealEnv, resealFailure, rotationKeys } from '../helpers/reseal-kit.js';
import { seedTenant } from '../helpers/seed.js';
import { databasePerTest } from '../helpers/test-env.js';

// After a SECRETS_KEY rotation, webhook secrets are re-sealed under the new key like account
// credentials: by the function, and by `npm run reseal` as a process.

const keys = rotationKeys();
const { OLD, NEW, STRANGER } = keys;

const tdb = databasePerTest('webhooks_reseal');

async function webhook(secret: string, key: Buffer): Promise<string> {
  const tenantId = await seedTenant(tdb.db);
  const repo = new WebhookRepository(tdb.db);
  return (await repo.create({ tenantId, url: 'https://hooks.example.com/', events: ['run.status'], secret: seal(secret, key) })).id;
}

test('every webhook secret ends up under the new key with the same value; one under an unknown key is reported, untouched; a second pass does nothing', async () => {
  const secrets = Array.from({ length: 5 }, () => newWebhookSecret());
  const ids = await Promise.all(secrets.map((s) => webhook(s, OLD)));
  const lost = await webhook(newWebhookSecret(), STRANGER);
  const repo = new WebhookRepository(tdb.db);
  const report = await resealWebhookSecrets(repo, [NEW, OLD], 2);
  expect(report).toEqual({ resealed: 5, raced: 0, unreadable: [lost] });
  const rows = await tdb.db.selectFrom('webhooks').select(['id', 'secret']).execute();
  for (const row of rows) {
    if (row.id === lost) expect(isSealedWith(row.secret, STRANGER)).toBe(true);
    else expect(open(row.secret, [NEW]).toString()).toBe(secrets[ids.indexOf(row.id)]);
  }
  expect(await resealWebhookSecrets(repo, [NEW, OLD], 2)).toEqual({ resealed: 0, raced: 0, unreadable: [lost] });
});

test('`npm run reseal` re-seals webhook secrets too, and exits 1 naming a webhook it could not open', async () => {
  const id = await webhook(newWebhookSecret(), OLD);
  const env = resealEnv(tdb.url, keys);
  const ok = await reseal(env);
  expect(ok.stdout).toContain('1 webhook secrets re-sealed under SECRETS_KEY');
  const row = await tdb.db.selectFrom('webhooks').select('secret').where('id', '=', id).executeTakeFirstOrThrow();
  expect(isSealedWith(row.secret, NEW)).toBe(true);

  const lost = await webhook(newWebhookSecret(), STRANGER);
  const failed = await resealFailure(env);
  expect(failed?.code).toBe(1);
  expect(failed?.stderr).toContain(lost);
});
