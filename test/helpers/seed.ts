// One seed factory for the tests that write rows with SQL instead of through the API: a tenant,
// an account, a campaign, a run with its targets. Each takes the columns a test cares about and
// fills the rest the one way every test did by hand.
import { randomUUID } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import { insertRuns, type DB, type MessagePart } from '@metronome/db';
import { runJobId } from '@metronome/queue';

type Columns<T extends keyof DB> = Partial<Insertable<DB[T]>>;

/** A tenant (its token hash random, so no token opens it); returns its id. */
export async function seedTenant(db: Kysely<DB>, columns: Columns<'tenants'> = {}): Promise<string> {
  const row = await db
    .insertInto('tenants')
    .values({ name: 't', token_hash: randomUUID(), ...columns })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** An `http` account of the tenant with a random external id and no credentials, unless told. */
export async function seedAccount(db: Kysely<DB>, tenantId: string, columns: Columns<'accounts'> = {}): Promise<string> {
  const row = await db
    .insertInto('accounts')
    .values({
      tenant_id: tenantId,
      platform: 'http',
      name: 'a',
      external_id: randomUUID(),
      credentials: null,
      max_send_per_minute: null,
      group_concurrency: null,
      ...columns,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A campaign of the account: UTC, every 60 s, one text part "hi", chats a and b, unless told. */
export async function seedCampaign(db: Kysely<DB>, owner: { tenantId: string; accountId: string }, columns: Columns<'campaigns'> = {}): Promise<string> {
  const row = await db
    .insertInto('campaigns')
    .values({
      tenant_id: owner.tenantId,
      account_id: owner.accountId,
      name: 'c',
      timezone: 'UTC',
      schedule: JSON.stringify({ type: 'interval', everySeconds: 60 }),
      messages: JSON.stringify([{ type: 'text', text: 'hi' }]),
      targets: ['a', 'b'],
      ...columns,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** A tenant with one account and one campaign of it: the scheduler tests' usual start. */
export async function seedCampaignOfNewAccount(
  db: Kysely<DB>,
  columns: { account?: Columns<'accounts'>; campaign?: Columns<'campaigns'> } = {},
): Promise<{ tenantId: string; accountId: string; campaignId: string }> {
  const tenantId = await seedTenant(db);
  const accountId = await seedAccount(db, tenantId, columns.account);
  const campaignId = await seedCampaign(db, { tenantId, accountId }, columns.campaign);
  return { tenantId, accountId, campaignId };
}

/** A manual run of the campaign with one target per chat and its first job id; returns its id. */
export async function seedRun(
  db: Kysely<DB>,
  o: { campaignId: string; tenantId: string; accountId: string; parts: MessagePart[]; scheduledAt: Date; windowEndAt?: Date | null },
): Promise<string> {
  const id = randomUUID();
  await insertRuns(db, [
    {
      id,
      campaignId: o.campaignId,
      tenantId: o.tenantId,
      accountId: o.accountId,
      trigger: 'manual',
      parts: o.parts,
      scheduledAt: o.scheduledAt,
      windowEndAt: o.windowEndAt ?? null,
      jobId: runJobId(id, 0),
    },
  ]);
  return id;
}
