import { sql } from 'kysely';
import { RunQueue } from '@metronome/queue';
import { createRedis, redisKeys } from '@metronome/redis';
import { scrapeSum } from '@metronome/testkit';
import { api, stackForFile } from '../helpers/stack.js';
import { eventually, REDIS_URL } from '../helpers/test-env.js';
import { seedCampaign } from '../helpers/seed.js';

// One tenant's campaign rows hold values the scheduler cannot turn into runs (written with
// SQL, as rows saved before the API refused such values would be). Another tenant's campaign
// comes due meanwhile: its run is created on time, the bad campaigns are deactivated with a
// reason and counted `failed` once each, and the scheduler keeps ticking.

const TICK_MS = 200; // test/helpers/stack.ts runs its scheduler at 200 ms ticks
const stack = stackForFile({ senders: 0 });

async function tenantWithAccount(name: string): Promise<{ token: string; tenantId: string; accountId: string }> {
  const tenant = (await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name })).body;
  const account = (
    await api(stack, 'POST', '/v1/accounts', tenant.token, {
      platform: 'http',
      credentials: { apiKey: 'sandbox-api-key-0001' },
      name,
      externalId: `${name}-account`,
    })
  ).body;
  return { token: tenant.token, tenantId: tenant.id, accountId: account.id };
}

test("a tenant's poison campaigns never delay another tenant's due run by more than one tick", async () => {
  const bad = await tenantWithAccount('poisoned');
  const good = await tenantWithAccount('healthy');
  const db = stack.db.db;
  const dueAt = new Date(Date.now() + 3_000);

  const poison = async (name: string, values: Record<string, unknown>): Promise<[string, string]> => {
    const id = await seedCampaign(db, bad, { name, targets: ['x'], next_run_at: dueAt });
    for (const [column, value] of Object.entries(values)) await sql`update campaigns set ${sql.ref(column)} = ${value} where id = ${id}`.execute(db);
    return [name, id];
  };
  const poisoned = new Map([
    // due long ago, so in every tick from now on: what the API saved for once.at = 0000-01-01T00:00:00+23:59
    await poison('year -1', {
      schedule: sql`${JSON.stringify({ type: 'once', at: '0000-01-01T00:00:00+23:59' })}::jsonb`,
      next_run_at: new Date('0000-01-01T00:00:00+23:59'),
    }),
    await poison('-infinity', { next_run_at: sql`'-infinity'::timestamptz` }),
    // due in the same tick as the healthy tenant's run
    await poison('after 9999', { schedule: sql`'{"type":"interval","everySeconds":1000000000000}'::jsonb` }),
    await poison('unknown zone', { timezone: 'Mars/Olympus_Mons', schedule: sql`'{"type":"cron","expression":"* * * * *"}'::jsonb` }),
    await poison('unknown schedule type', { schedule: sql`'{"type":"fortnightly"}'::jsonb` }),
    await poison('invalid window', { window_start: '7am', window_end: 'noon' }),
    await poison('a NULL chat id', { targets: sql`array['x', null]::text[]` }),
  ]);

  const healthy = await api(stack, 'POST', '/v1/campaigns', good.token, {
    accountId: good.accountId,
    name: 'on time',
    timezone: 'UTC',
    schedule: { type: 'once', at: dueAt.toISOString() },
    messages: [{ type: 'text', text: 'hello' }],
    targets: ['a', 'b'],
  });
  expect(healthy.status).toBe(201);

  const run = await eventually(
    'the healthy tenant’s run',
    async () => db.selectFrom('runs').select(['scheduled_at', 'created_at']).where('campaign_id', '=', healthy.body.id).executeTakeFirst(),
    15_000,
    50,
  );
  expect(run.scheduled_at.toISOString()).toBe(dueAt.toISOString());
  // runs due within one tick are created ahead, so a tick on time creates it before its due time
  expect(run.created_at.getTime()).toBeLessThanOrEqual(dueAt.getTime() + TICK_MS);

  const rows = await db.selectFrom('campaigns').select(['id', 'active', 'last_error']).where('tenant_id', '=', bad.tenantId).execute();
  for (const [name, id] of poisoned) {
    const row = rows.find((r) => r.id === id)!;
    expect({ name, active: row.active }).toEqual({ name, active: false });
    expect(row.last_error).toMatch(/^The scheduler could not turn this campaign into a run and deactivated it: /);
  }
  expect(await db.selectFrom('runs').select('id').where('tenant_id', '=', bad.tenantId).execute()).toEqual([]);

  // Still ticking, and each bad campaign was counted failed once, not once per tick.
  const metrics = `http://127.0.0.1:${stack.schedulerMetricsPort}/metrics`;
  const ticks = await scrapeSum(metrics, 'metronome_scheduler_tick_seconds_count');
  await eventually('five more ticks', async () => (await scrapeSum(metrics, 'metronome_scheduler_tick_seconds_count')) >= ticks + 5, 10_000, 100);
  expect(await scrapeSum(metrics, 'metronome_job_outcomes_total', 'outcome="failed"')).toBe(poisoned.size);
  const lines = stack.scheduler.output.map((line) => JSON.parse(line) as { msg: string; decision?: string; campaignId?: string });
  expect(lines.filter((l) => l.msg === 'tick failed; retrying next tick')).toEqual([]);
  expect(
    lines
      .filter((l) => l.decision === 'failed')
      .map((l) => l.campaignId)
      .sort(),
  ).toEqual([...poisoned.values()].sort());
}, 90_000);

test('while every tick fails, the reconciler still gives a run that lost its job a new one', async () => {
  const t = await tenantWithAccount('reconciled');
  const created = await api(stack, 'POST', '/v1/campaigns', t.token, {
    accountId: t.accountId,
    name: 'waits for a sender',
    timezone: 'UTC',
    schedule: { type: 'once', at: new Date().toISOString() },
    messages: [{ type: 'text', text: 'hello' }],
    targets: ['a'],
  });
  expect(created.status).toBe(201);
  const db = stack.db.db;
  const run = await eventually(
    'its run',
    async () => db.selectFrom('runs').select(['id', 'job_id']).where('campaign_id', '=', created.body.id).executeTakeFirst(),
    15_000,
    50,
  );

  const redis = createRedis(REDIS_URL, 'test-poison');
  const queue = new RunQueue(redis, redisKeys(stack.keyPrefix).queuePrefix);
  // Every tick now fails on a statement (no senders run here, so nothing else needs the table).
  await sql`alter table campaigns rename to campaigns_away`.execute(db);
  try {
    await stack.scheduler.waitForLog((l) => l['msg'] === 'tick failed; retrying next tick', 10_000);
    await queue.queue.obliterate({ force: true });
    expect(await queue.existing([run.job_id!])).toEqual(new Set());
    const moved = await eventually(
      'a new live job for the run',
      async () => {
        const row = await db.selectFrom('runs').select('job_id').where('id', '=', run.id).executeTakeFirstOrThrow();
        return row.job_id !== run.job_id && (await queue.existing([row.job_id!])).size === 1 ? row : null;
      },
      10_000,
      50,
    );
    expect(moved.job_id).toBe(`run-${run.id}-1`);
  } finally {
    await sql`alter table campaigns_away rename to campaigns`.execute(db);
    await queue.close();
    await redis.quit();
  }
}, 60_000);
