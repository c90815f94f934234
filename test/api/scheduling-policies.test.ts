import { apiForFile, call, campaignBody, createAccount, createCampaign, NOW, seedRun, tenantForFile } from './harness.js';

// Scheduling policies through the API: catch-up on create, PATCH and every answer; run now
// keeping the per-chat interval by default, or ignoring it when asked.

const api = apiForFile('api_sched_policies');
const a = tenantForFile(api, 'A');
let accountA: string;
beforeAll(async () => {
  accountA = await createAccount(api, a);
});
beforeEach(() => api.clock.set(NOW));

const fieldsOf = (body: { error: { details: { field: string }[] } }) => body.error.details.map((d) => d.field);

describe('catchUp', () => {
  test('defaults to latest with the default lateness; given values are stored and answered', async () => {
    const plain = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(accountA));
    expect(plain.body).toMatchObject({ catchUp: { policy: 'latest', maxLatenessSeconds: null }, skippedCount: 0, lastSkippedAt: null });
    const all = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(accountA, { catchUp: { policy: 'all', maxLatenessSeconds: 3600 } }));
    expect(all.status).toBe(201);
    expect(all.body.catchUp).toEqual({ policy: 'all', maxLatenessSeconds: 3600 });
    const stored = await api.db
      .selectFrom('campaigns')
      .select(['catch_up_policy', 'catch_up_max_lateness_seconds'])
      .where('id', '=', all.body.id)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ catch_up_policy: 'all', catch_up_max_lateness_seconds: 3600 });
    const policyOnly = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(accountA, { catchUp: { policy: 'skip' } }));
    expect(policyOnly.body.catchUp).toEqual({ policy: 'skip', maxLatenessSeconds: null });
  });

  test.each([
    [{ policy: 'sometimes' }, 'catchUp.policy'],
    [{ policy: 'all', maxLatenessSeconds: 0 }, 'catchUp.maxLatenessSeconds'],
    [{ policy: 'all', maxLatenessSeconds: 86_401 }, 'catchUp.maxLatenessSeconds'],
    [{ policy: 'all', maxLatenessSeconds: 1.5 }, 'catchUp.maxLatenessSeconds'],
    [{ policy: 'all', window: 5 }, 'catchUp.window'],
  ])('bad catchUp %j → 400 naming %s, on create and on PATCH', async (catchUp, field) => {
    const created = await call(api, 'POST', '/v1/campaigns', a.token, campaignBody(accountA, { catchUp }));
    expect(created.status).toBe(400);
    expect(fieldsOf(created.body)).toContain(field);
    const { id } = await createCampaign(api, a);
    const patched = await call(api, 'PATCH', `/v1/campaigns/${id}`, a.token, { catchUp });
    expect(patched.status).toBe(400);
    expect(fieldsOf(patched.body)).toContain(field);
  });

  test('PATCH changes only the catch-up fields given; null goes back to the default lateness', async () => {
    const { id } = await createCampaign(api, a, { catchUp: { policy: 'all', maxLatenessSeconds: 600 } });
    const before = (await call(api, 'GET', `/v1/campaigns/${id}`, a.token)).body;
    const policy = await call(api, 'PATCH', `/v1/campaigns/${id}`, a.token, { catchUp: { policy: 'skip' } });
    expect(policy.body.catchUp).toEqual({ policy: 'skip', maxLatenessSeconds: 600 });
    // a catch-up edit is not a schedule edit: the next occurrence stays where it was
    expect(policy.body.nextRunAt).toBe(before.nextRunAt);
    const reset = await call(api, 'PATCH', `/v1/campaigns/${id}`, a.token, { catchUp: { maxLatenessSeconds: null } });
    expect(reset.body.catchUp).toEqual({ policy: 'skip', maxLatenessSeconds: null });
  });

  test('the skipped count and the latest skipped occurrence the scheduler recorded are shown', async () => {
    const { id } = await createCampaign(api, a);
    await api.db
      .updateTable('campaigns')
      .set({ last_skipped_at: new Date(NOW - 60_000) })
      .where('id', '=', id)
      .execute();
    await api.db
      .updateTable('campaigns')
      .set({ skipped_count: 7 } as never)
      .where('id', '=', id)
      .execute();
    const res = await call(api, 'GET', `/v1/campaigns/${id}`, a.token);
    expect(res.body).toMatchObject({ skippedCount: 7, lastSkippedAt: new Date(NOW - 60_000).toISOString() });
  });
});

describe('run now and the per-chat interval', () => {
  /** An interval campaign (5 min) whose chats were reached a minute ago. */
  async function justDelivered(): Promise<string> {
    const { id } = await createCampaign(api, a, { schedule: { type: 'interval', everySeconds: 300 }, targets: ['h1', 'h2', 'h3'] });
    const earlier = await seedRun(api, id, 'success', { h1: 'sent', h2: 'sent', h3: 'sent' });
    await api.db
      .updateTable('run_targets')
      .set({ sent_at: new Date(NOW - 60_000) })
      .where('run_id', '=', earlier.id)
      .execute();
    await api.db
      .updateTable('runs')
      .set({ finished_at: new Date(NOW - 30_000) })
      .where('id', '=', earlier.id)
      .execute();
    return id;
  }
  const targetsDue = async (runId: string) =>
    (await api.db.selectFrom('run_targets').select(['chat_id', 'next_attempt_at']).where('run_id', '=', runId).orderBy('chat_id').execute()).map((t) => ({
      chat: t.chat_id,
      at: t.next_attempt_at.getTime() <= NOW ? 'now' : t.next_attempt_at.toISOString(),
    }));

  test('by default every chat keeps the interval: the run says interval_gate and holds each chat until it ends', async () => {
    const id = await justDelivered();
    const res = await call(api, 'POST', `/v1/campaigns/${id}/runs`, a.token);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ignoredInterval: false, waiting: { reason: 'interval_gate', until: new Date(NOW + 240_000).toISOString() } });
    const held = new Date(NOW + 240_000).toISOString();
    expect(await targetsDue(res.body.id)).toEqual([
      { chat: 'h1', at: held },
      { chat: 'h2', at: held },
      { chat: 'h3', at: held },
    ]);
    // an explicit false is the same
    expect((await call(api, 'POST', `/v1/runs/${res.body.id}/cancel`, a.token)).status).toBe(202);
    api.clock.advance(1000); // (one run per campaign and scheduledAt)
    const explicit = await call(api, 'POST', `/v1/campaigns/${id}/runs`, a.token, { ignoreInterval: false });
    expect(explicit.body).toMatchObject({ ignoredInterval: false, waiting: { reason: 'interval_gate' } });
  });

  test('ignoreInterval: every chat is due now, the run records it, and a resume does not gate it again', async () => {
    const id = await justDelivered();
    const res = await call(api, 'POST', `/v1/campaigns/${id}/runs`, a.token, { ignoreInterval: true });
    expect(res.status).toBe(201);
    expect(res.body.ignoredInterval).toBe(true);
    expect(res.body.waiting?.reason).not.toBe('interval_gate');
    expect(await targetsDue(res.body.id)).toEqual([
      { chat: 'h1', at: 'now' },
      { chat: 'h2', at: 'now' },
      { chat: 'h3', at: 'now' },
    ]);
    expect((await call(api, 'GET', `/v1/runs/${res.body.id}`, a.token)).body.ignoredInterval).toBe(true);
    // paused then resumed: the re-queue trigger (migrations/0007) leaves its chats due
    expect((await call(api, 'POST', `/v1/runs/${res.body.id}/pause`, a.token)).status).toBe(202);
    expect((await call(api, 'POST', `/v1/runs/${res.body.id}/resume`, a.token)).status).toBe(202);
    expect(await targetsDue(res.body.id)).toEqual([
      { chat: 'h1', at: 'now' },
      { chat: 'h2', at: 'now' },
      { chat: 'h3', at: 'now' },
    ]);
  });

  test('a bad run-now body is a 400 naming the field', async () => {
    const { id } = await createCampaign(api, a);
    const res = await call(api, 'POST', `/v1/campaigns/${id}/runs`, a.token, { ignoreInterval: 'yes' });
    expect(res.status).toBe(400);
    expect(fieldsOf(res.body)).toContain('ignoreInterval');
    const extra = await call(api, 'POST', `/v1/campaigns/${id}/runs`, a.token, { ignoreIntervals: true });
    expect(extra.status).toBe(400);
  });
});
