import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { isSealedWith, newWebhookSecret, open, seal } from '@metronome/core';
import { resealWebhookSecrets, WebhookRepository } from '@metronome/db';
import { createTestDatabase, type TestDatabase } from '../helpers/test-env.js';

// After a SECRETS_KEY rotation, webhook secrets are re-sealed under the new key like account
// credentials: by the function, and by `npm run reseal` as a process.

const run = promisify(execFile);
const OLD = randomBytes(32);
const NEW = randomBytes(32);
const STRANGER = randomBytes(32);

let tdb: TestDatabase;
beforeEach(async () => {
  tdb = await createTestDatabase('webhooks_reseal');
});
afterEach(async () => {
  await tdb.drop();
});

async function webhook(secret: string, key: Buffer): Promise<string> {
  const tenant = await tdb.db.insertInto('tenants').values({ name: 't', token_hash: randomUUID() }).returning('id').executeTakeFirstOrThrow();
  const repo = new WebhookRepository(tdb.db);
  return (await repo.create({ tenantId: tenant.id, url: 'https://hooks.example.com/', events: ['run.status'], secret: seal(secret, key) })).id;
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
  const env = { ...process.env, DATABASE_URL: tdb.url, SECRETS_KEY: NEW.toString('hex'), SECRETS_KEY_PREVIOUS: OLD.toString('hex'), NODE_ENV: 'production' };
  const ok = await run('node', ['libs/db/dist/reseal-cli.js'], { env });
  expect(ok.stdout).toContain('1 webhook secrets re-sealed under SECRETS_KEY');
  const row = await tdb.db.selectFrom('webhooks').select('secret').where('id', '=', id).executeTakeFirstOrThrow();
  expect(isSealedWith(row.secret, NEW)).toBe(true);

  const lost = await webhook(newWebhookSecret(), STRANGER);
  const failed = await run('node', ['libs/db/dist/reseal-cli.js'], { env }).then(
    () => null,
    (error: { code: number; stderr: string }) => error,
  );
  expect(failed?.code).toBe(1);
  expect(failed?.stderr).toContain(lost);
});
