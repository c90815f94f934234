import { redisKeys } from '@metronome/redis';
import { sql } from 'kysely';
import { apiForFile, call, campaignBody, createCampaign, createTenant, NOW, seedRun, tenantForFile } from './harness.js';

// Every run says why it is where it is (CONTRACT §3 `waiting`, `eta`): rows put in PostgreSQL
// and Redis as the scheduler and senders would have left them, read at a manual clock
// (11:00 in Kuala Lumpur, inside the campaigns' 06:00–18:00 window, which closes at 10:00 UTC).

const api = apiForFile('api_runs_waiting');
const t = tenantForFile(api, 'waiting');
beforeEach(() => api.clock.set(NOW));

const at = (ms: number) => new Date(NOW + ms);
const iso = (ms: number) => at(ms).toISOString();
const CLOSE = Date.parse('2030-01-16T10:00:00Z') - NOW;
// 40/min (the API's default pace) reserved 2 % slower: one slot every 1530 ms
const SLOT = 1530;

/** A running run of a fresh campaign (own account), due now, its window closing at 18:00 local. */
async function running(chats: string[], extra: Record<string, unknown> = {}) {
  const campaign = await createCampaign(api, t, extra);
  const run = await seedRun(api, campaign.id, 'running', Object.fromEntries(chats.map((c) => [c, 'pending' as const])), { scheduledAt: at(-600_000) });
  await api.db
    .updateTable('runs')
    .set({ window_end_at: at(CLOSE) })
    .where('id', '=', run.id)
    .execute();
  return { ...run, accountId: campaign.accountId };
}
async function holdTargets(runId: string, chats: string[], until: number, set: { attempts?: number; error_code?: string | null } = {}) {
  await api.db
    .updateTable('run_targets')
    .set({ next_attempt_at: at(until), ...set })
    .where('run_id', '=', runId)
    .where('chat_id', 'in', chats)
    .execute();
}
async function setPace(accountId: string, tat: number) {
  await api.redis.set(redisKeys(api.prefix).accountPace(accountId), String(tat), 'PX', 600_000);
}
const getRun = async (id: string) => (await call(api, 'GET', `/v1/runs/${id}`, t.token)).body;
const targetsOf = async (id: string) => (await call(api, 'GET', `/v1/runs/${id}/targets`, t.token)).body.items as Array<{ chatId: string; waiting: unknown }>;

describe('run.waiting: every reason', () => {
  test('scheduled: before scheduledAt, until then', async () => {
    const run = await running(['a', 'b']);
    await api.db
      .updateTable('runs')
      .set({ status: 'queued', scheduled_at: at(1_800_000) })
      .where('id', '=', run.id)
      .execute();
    expect((await getRun(run.id)).waiting).toEqual({
      reason: 'scheduled',
      until: iso(1_800_000),
      detail: 'Scheduled for 11:30 (Asia/Kuala_Lumpur); 2 chats to send.',
    });
  });

  test('window_closed: waiting for the window to open, until its opening', async () => {
    const run = await running(['a'], { deliveryWindow: { start: '12:00', end: '18:00' } });
    await api.db.updateTable('runs').set({ status: 'queued' }).where('id', '=', run.id).execute();
    expect((await getRun(run.id)).waiting).toEqual({
      reason: 'window_closed',
      until: '2030-01-16T04:00:00.000Z',
      detail: 'Waiting for the delivery window to open at 12:00 (Asia/Kuala_Lumpur); 1 chat to send.',
    });
  });

  test('window_closed: paused at the close, with its bottleneck; resumed by hand or by itself at the opening', async () => {
    const chats = Array.from({ length: 60 }, (_, i) => `c${String(i).padStart(2, '0')}`);
    const run = await running(chats);
    const firstSend = new Date('2030-01-16T09:59:00Z');
    await api.db
      .updateTable('runs')
      .set({ status: 'paused', paused_reason: 'window_closed', scheduled_at: firstSend, first_send_at: firstSend })
      .where('id', '=', run.id)
      .execute();
    await api.db.updateTable('run_targets').set({ status: 'sent' }).where('run_id', '=', run.id).where('chat_id', '<', 'c30').execute();
    api.clock.set(Date.parse('2030-01-16T11:00:00Z'));
    expect((await getRun(run.id)).waiting).toEqual({
      reason: 'window_closed',
      until: null,
      detail:
        "Paused at the window's close with 30 chats pending; resume it to continue (the window opens at 17 Jan 06:00, Asia/Kuala_Lumpur). " +
        'Bottleneck: it needed 60/min for 60 chats from 17:59 to 18:00; the account is paced at 40/min.',
    });
    await sql`update campaigns set auto_resume = true where id = ${run.campaignId}`.execute(api.db);
    expect((await getRun(run.id)).waiting).toMatchObject({ reason: 'window_closed', until: '2030-01-16T22:00:00.000Z' });
  });

  test('interval_gate: chats held since their last delivery, until the first is free', async () => {
    const run = await running(['a', 'b', 'c']);
    await holdTargets(run.id, ['a', 'b', 'c'], 240_000);
    const body = await getRun(run.id);
    expect(body.waiting).toEqual({
      reason: 'interval_gate',
      until: iso(240_000),
      detail: '3 chats held until 11:04 by the 5-minute interval since their last delivery.',
    });
    const targets = await targetsOf(run.id);
    expect(targets[0]!.waiting).toEqual({
      reason: 'interval_gate',
      until: iso(240_000),
      detail: 'Held until 11:04 by the 5-minute interval since their last delivery.',
    });
  });

  test("pace: chats due, the account's next slot (Redis) ahead", async () => {
    const run = await running(['a', 'b']);
    await setPace(run.accountId, NOW + 1200);
    expect((await getRun(run.id)).waiting).toEqual({
      reason: 'pace',
      until: iso(1200),
      detail: "2 chats to send at the account's pace of 40/min; next slot at 11:00:01.",
    });
    expect((await targetsOf(run.id)).map((x) => x.waiting)).toEqual([
      expect.objectContaining({ reason: 'pace', until: iso(1200) }),
      expect.objectContaining({ reason: 'pace', until: iso(1200) }),
    ]);
    // a slot already free is no hold
    await setPace(run.accountId, NOW - 1);
    expect((await getRun(run.id)).waiting.reason).toBe('queue');
  });

  test('flood_wait: the platform told the account to wait (accounts.blocked_until)', async () => {
    const run = await running(['a']);
    await api.db
      .updateTable('accounts')
      .set({ blocked_until: at(300_000) })
      .where('id', '=', run.accountId)
      .execute();
    expect((await getRun(run.id)).waiting).toEqual({
      reason: 'flood_wait',
      until: iso(300_000),
      detail: 'The platform told the account to wait until 11:05; 1 chat to send.',
    });
    expect((await targetsOf(run.id))[0]!.waiting).toMatchObject({ reason: 'flood_wait', until: iso(300_000) });
  });

  test('slow_mode: chats the platform put in slow mode', async () => {
    const run = await running(['a', 'b']);
    await holdTargets(run.id, ['a', 'b'], 120_000, { error_code: 'slow_mode' });
    expect((await getRun(run.id)).waiting).toEqual({ reason: 'slow_mode', until: iso(120_000), detail: "2 chats held until 11:02 by the chats' slow mode." });
  });

  test('account_busy: another run of the account is mid-fan-out and holds its lock', async () => {
    const mine = await running(['a', 'b']);
    const other = await call(api, 'POST', '/v1/campaigns', t.token, campaignBody(mine.accountId, { name: 'other' }));
    const busy = await seedRun(api, other.body.id, 'running', { x: 'in_flight', y: 'pending' });
    await api.redis.set(redisKeys(api.prefix).accountLock(mine.accountId), 'lock-token', 'PX', 60_000);
    expect((await getRun(mine.id)).waiting).toEqual({
      reason: 'account_busy',
      until: null,
      detail: 'Another run of this account is sending; runs on one account take turns. 2 chats due.',
    });
    // without the lock nobody holds the account
    await api.redis.del(redisKeys(api.prefix).accountLock(mine.accountId));
    expect((await getRun(mine.id)).waiting.reason).toBe('queue');
    await call(api, 'POST', `/v1/runs/${busy.id}/cancel`, t.token);
  });

  test('retry_backoff: chats waiting to retry after an error', async () => {
    const run = await running(['a', 'b']);
    await holdTargets(run.id, ['a'], 60_000, { attempts: 2, error_code: 'http_503' });
    await holdTargets(run.id, ['b'], 180_000, { attempts: 1, error_code: 'http_500' });
    expect((await getRun(run.id)).waiting).toEqual({
      reason: 'retry_backoff',
      until: iso(60_000),
      detail: '2 chats held from 11:01 to 11:03, waiting to retry after an error.',
    });
    expect((await targetsOf(run.id)).map((x) => x.waiting)).toEqual([
      { reason: 'retry_backoff', until: iso(60_000), detail: 'Held until 11:01, waiting to retry after an error.' },
      { reason: 'retry_backoff', until: iso(180_000), detail: 'Held until 11:03, waiting to retry after an error.' },
    ]);
  });

  test('account_unavailable: the account cannot send (open run, and paused for it)', async () => {
    const run = await running(['a']);
    await api.db.updateTable('accounts').set({ status: 'disabled' }).where('id', '=', run.accountId).execute();
    expect((await getRun(run.id)).waiting).toEqual({
      reason: 'account_unavailable',
      until: null,
      detail: `Account is disabled: enable it (PATCH /v1/accounts/${run.accountId} {"status":"active"}), then resume.`,
    });
    await api.db.updateTable('runs').set({ status: 'paused', paused_reason: 'account_unavailable' }).where('id', '=', run.id).execute();
    expect((await getRun(run.id)).waiting).toMatchObject({ reason: 'account_unavailable', until: null });
  });

  test('queue: due, nothing holds it, waiting for a free sender', async () => {
    const run = await running(['a', 'b', 'c']);
    expect((await getRun(run.id)).waiting).toEqual({ reason: 'queue', until: null, detail: '3 chats due since 10:50, waiting for a free sender.' });
  });

  test('null when nothing holds it: sending, finished, or paused by the operator', async () => {
    const sending = await running(['a', 'b']);
    await api.db.updateTable('run_targets').set({ status: 'in_flight' }).where('run_id', '=', sending.id).where('chat_id', '=', 'a').execute();
    expect((await getRun(sending.id)).waiting).toBeNull();
    const campaign = await createCampaign(api, t);
    const done = await seedRun(api, campaign.id, 'success', { a: 'sent' });
    expect(await getRun(done.id)).toMatchObject({ waiting: null, eta: null });
    const paused = await running(['a']);
    await api.db.updateTable('runs').set({ status: 'paused', paused_reason: 'operator' }).where('id', '=', paused.id).execute();
    expect(await getRun(paused.id)).toMatchObject({ waiting: null, eta: null });
    expect((await targetsOf(done.id))[0]!.waiting).toBeNull();
  });
});

describe('run.eta', () => {
  test("the last chat's slot at the account's pace, from its next free slot", async () => {
    const run = await running(Array.from({ length: 12 }, (_, i) => `c${i}`));
    expect((await getRun(run.id)).eta).toBe(iso(11 * SLOT));
    await setPace(run.accountId, NOW + 10_000);
    expect((await getRun(run.id)).eta).toBe(iso(10_000 + 11 * SLOT));
    await api.db.updateTable('accounts').set({ max_send_per_minute: 60 }).where('id', '=', run.accountId).execute();
    expect((await getRun(run.id)).eta).toBe(iso(10_000 + 11 * 1020));
  });

  test('not before the last held chat is free', async () => {
    const run = await running(['a', 'b']);
    await holdTargets(run.id, ['a'], 240_000);
    expect((await getRun(run.id)).eta).toBe(iso(240_000));
  });

  test('null when it cannot finish inside the window; the sentence says how many chats fit', async () => {
    const run = await running(Array.from({ length: 1000 }, (_, i) => `c${String(i).padStart(4, '0')}`));
    await api.db
      .updateTable('runs')
      .set({ window_end_at: at(600_000) })
      .where('id', '=', run.id)
      .execute();
    await setPace(run.accountId, NOW + 1000);
    const body = await getRun(run.id);
    expect(body.eta).toBeNull();
    expect(body.waiting).toEqual({
      reason: 'pace',
      until: iso(1000),
      detail:
        "1000 chats to send at the account's pace of 40/min; next slot at 11:00:01; about 392 of the 1000 chats left fit before the window closes at 11:10.",
    });
  });
});

/** Statements the app runs on PostgreSQL, and MGETs on Redis, while `work` runs. */
async function counted(work: () => Promise<unknown>): Promise<{ queries: number; mgets: number }> {
  const executor = api.db.getExecutor() as unknown as { executeQuery: (...args: unknown[]) => Promise<unknown> };
  const redis = api.redis as unknown as { mget: (...args: unknown[]) => Promise<unknown> };
  const query = executor.executeQuery;
  const mget = redis.mget;
  const seen = { queries: 0, mgets: 0 };
  executor.executeQuery = function (...args) {
    seen.queries++;
    return query.apply(this, args);
  };
  redis.mget = function (...args) {
    seen.mgets++;
    return mget.apply(this, args);
  };
  try {
    await work();
  } finally {
    executor.executeQuery = query;
    redis.mget = mget;
  }
  return seen;
}

describe('the runs list', () => {
  test('costs the same few statements and one MGET for 2 runs as for 12', async () => {
    const tenant = await createTenant(api, 'cost');
    const page = (limit: number) => counted(() => call(api, 'GET', `/v1/runs?limit=${limit}`, tenant.token));
    for (let i = 0; i < 12; i++) {
      const c = await createCampaign(api, tenant);
      await seedRun(api, c.id, 'running', { a: 'pending', b: 'pending' }, { scheduledAt: at(-60_000) });
    }
    const small = await page(2);
    const large = await page(12);
    expect(large).toEqual(small);
    expect(large.mgets).toBe(1);
    expect(large.queries).toBeGreaterThan(0);
  });

  test('explains every run of a page', async () => {
    const tenant = await createTenant(api, 'list');
    const c1 = await createCampaign(api, tenant);
    const c2 = await createCampaign(api, tenant);
    const queued = await seedRun(api, c1.id, 'queued', { a: 'pending' }, { scheduledAt: at(60_000), createdAt: at(-2000) });
    const gated = await seedRun(api, c2.id, 'running', { a: 'pending' }, { scheduledAt: at(-60_000), createdAt: at(-1000) });
    await api.db
      .updateTable('runs')
      .set({ window_end_at: at(CLOSE) })
      .where('id', '=', gated.id)
      .execute();
    await holdTargets(gated.id, ['a'], 240_000);
    const page = await call(api, 'GET', '/v1/runs', tenant.token);
    expect(page.body.items.map((r: { id: string; waiting: { reason: string } }) => [r.id, r.waiting.reason])).toEqual([
      [gated.id, 'interval_gate'],
      [queued.id, 'scheduled'],
    ]);
  });
});

test('/openapi.json documents waiting (every reason) and eta on runs and targets', async () => {
  const doc = (await call(api, 'GET', '/openapi.json', null)).body;
  const text = JSON.stringify(doc.components.schemas);
  for (const reason of [
    'scheduled',
    'window_closed',
    'interval_gate',
    'pace',
    'flood_wait',
    'slow_mode',
    'account_busy',
    'retry_backoff',
    'account_unavailable',
    'queue',
  ]) {
    expect(text).toContain(`"${reason}"`);
  }
  expect(Object.keys(doc.components.schemas.Run.properties)).toEqual(expect.arrayContaining(['waiting', 'eta']));
  expect(Object.keys(doc.components.schemas.RunTarget.properties)).toContain('waiting');
});
