import { redisKeys } from '@metronome/redis';
import { call, createCampaign, createTenant, fields, seedRun, startApi, type Api, type Tenant } from './harness.js';

// The ban-safety settings of accounts: human pacing, caps and warm-up (CONTRACT §3, accounts).

const KEY = { apiKey: 'sandbox-api-key-0001' };
const DAY = 86_400_000;

let api: Api;
let a: Tenant;
let n = 0;
beforeAll(async () => {
  api = await startApi('api_accounts_safety');
  a = await createTenant(api, 'A');
}, 30_000);
afterAll(async () => api.close());

const httpAccount = (extra: Record<string, unknown> = {}) =>
  call(api, 'POST', '/v1/accounts', a.token, { platform: 'http', credentials: KEY, name: 'Shop', externalId: `safe-${++n}`, ...extra });

describe('platform defaults', () => {
  test('a new WhatsApp account waits 30–60 s between sends; telegram and http accounts none', async () => {
    const wa = await call(api, 'POST', '/v1/accounts', a.token, { platform: 'whatsapp', name: 'Phone' });
    expect(wa.body).toMatchObject({ sendDelaySeconds: { min: 30, max: 60 }, hourlyCap: null, dailyCap: null, warmup: null });
    const tg = await call(api, 'POST', '/v1/accounts', a.token, {
      platform: 'telegram',
      name: 'Bot',
      credentials: { botToken: '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw' },
    });
    expect(tg.body.sendDelaySeconds).toBeNull();
    expect((await httpAccount()).body.sendDelaySeconds).toBeNull();
    // a WhatsApp account may opt out explicitly
    const fast = await call(api, 'POST', '/v1/accounts', a.token, { platform: 'whatsapp', name: 'Phone 2', sendDelaySeconds: null });
    expect(fast.body.sendDelaySeconds).toBeNull();
  });

  test('GET /v1/account-defaults answers, per platform, what a POST that leaves the settings out gets', async () => {
    const res = await call(api, 'GET', '/v1/account-defaults', a.token);
    expect(res.status).toBe(200);
    const by = Object.fromEntries((res.body.items as { platform: string }[]).map((d) => [d.platform, d])) as Record<string, any>;
    expect(Object.keys(by).sort()).toEqual(['http', 'telegram', 'telegram_user', 'whatsapp']);
    expect(by['whatsapp']).toMatchObject({ sendDelaySeconds: { min: 30, max: 60 }, optOutKeywords: ['STOP', 'UNSUBSCRIBE'] });
    expect(by['http']).toMatchObject({ sendDelaySeconds: null, optOutKeywords: [], typing: null });
    const wa = (await call(api, 'POST', '/v1/accounts', a.token, { platform: 'whatsapp', name: 'Defaults' })).body;
    const http = (await httpAccount({ warmup: {} })).body;
    for (const [made, d] of [
      [wa, by['whatsapp']],
      [http, by['http']],
    ]) {
      const { warmupSteps, limitSettings, ...given } = d;
      expect(limitSettings).toEqual(expect.any(Array));
      expect(made).toMatchObject(given);
    }
    expect(wa.warmup).toBeNull();
    expect(http.warmup.steps).toEqual(by['http'].warmupSteps);
    // no token: a 401, as every /v1 route
    expect((await call(api, 'GET', '/v1/account-defaults', null)).status).toBe(401);
  });
});

describe('settings on create, PATCH and the answer', () => {
  test('are stored, shown, changed and removed with null', async () => {
    const created = await httpAccount({ sendDelaySeconds: { min: 1, max: 2 }, hourlyCap: 8, dailyCap: 100 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ sendDelaySeconds: { min: 1, max: 2 }, hourlyCap: 8, dailyCap: 100, warmup: null });
    const id = created.body.id;
    const patched = await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { hourlyCap: 9, sendDelaySeconds: null });
    expect(patched.body).toMatchObject({ sendDelaySeconds: null, hourlyCap: 9, dailyCap: 100 });
    const read = await call(api, 'GET', `/v1/accounts/${id}`, a.token);
    expect(read.body).toMatchObject({ sendDelaySeconds: null, hourlyCap: 9, dailyCap: 100 });
    expect((await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { dailyCap: null, hourlyCap: null })).body).toMatchObject({
      hourlyCap: null,
      dailyCap: null,
    });
  });

  test("a warm-up defaults to the documented ramp from now and shows today's cap", async () => {
    const created = await httpAccount({ warmup: {} });
    const now = api.clock.now();
    expect(created.body.warmup).toEqual({
      startedAt: new Date(now).toISOString(),
      steps: [
        { afterDays: 0, dailyCap: 20 },
        { afterDays: 4, dailyCap: 50 },
        { afterDays: 8, dailyCap: 100 },
        { afterDays: 15, dailyCap: 200 },
        { afterDays: 31, dailyCap: null },
      ],
      capToday: 20,
    });
    const id = created.body.id;
    const started = new Date(now - 9 * DAY).toISOString();
    const patched = await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { warmup: { startedAt: started } });
    expect(patched.body.warmup).toMatchObject({ startedAt: started, capToday: 100 });
    const own = await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, {
      warmup: {
        startedAt: started,
        steps: [
          { afterDays: 0, dailyCap: 5 },
          { afterDays: 5, dailyCap: null },
        ],
      },
    });
    expect(own.body.warmup).toMatchObject({ capToday: null });
    expect((await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { warmup: null })).body.warmup).toBeNull();
  });
});

describe('bad settings get a 400 naming the field', () => {
  test.each([
    [{ sendDelaySeconds: { min: 5, max: 2 } }, 'sendDelaySeconds.max'],
    [{ sendDelaySeconds: { min: -1, max: 2 } }, 'sendDelaySeconds.min'],
    [{ sendDelaySeconds: { min: 1 } }, 'sendDelaySeconds.max'],
    [{ sendDelaySeconds: { min: 1.5, max: 2 } }, 'sendDelaySeconds.min'],
    [{ hourlyCap: 0 }, 'hourlyCap'],
    [{ dailyCap: 2.5 }, 'dailyCap'],
    [{ hourlyCap: '8' }, 'hourlyCap'],
    [{ warmup: { steps: [] } }, 'warmup.steps'],
    [{ warmup: { steps: [{ afterDays: 0, dailyCap: 0 }] } }, 'warmup.steps.0.dailyCap'],
    [
      {
        warmup: {
          steps: [
            { afterDays: 1, dailyCap: 5 },
            { afterDays: 1, dailyCap: 6 },
          ],
        },
      },
      'warmup.steps',
    ],
    [{ warmup: { startedAt: 'yesterday' } }, 'warmup.startedAt'],
  ])('%j → %s', async (body, field) => {
    const created = await httpAccount(body);
    expect(created.status).toBe(400);
    expect(fields(created)).toEqual([field]);
    const id = (await httpAccount()).body.id;
    const patched = await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, body);
    expect(patched.status).toBe(400);
    expect(fields(patched)).toEqual([field]);
  });
});

describe("a run held by its account's limits says so (waiting)", () => {
  /** a running run due a minute ago, its window open for hours */
  async function running(campaignId: string, chats: string[]) {
    const run = await seedRun(api, campaignId, 'running', Object.fromEntries(chats.map((c) => [c, 'pending' as const])), {
      scheduledAt: new Date(api.clock.now() - 60_000),
    });
    await api.db
      .updateTable('runs')
      .set({ window_end_at: new Date(api.clock.now() + 6 * 3_600_000) })
      .where('id', '=', run.id)
      .execute();
    return run;
  }

  test("cap: the account's cap is met, until its window frees a slot (as the sender left it in Redis)", async () => {
    const campaign = await createCampaign(api, a);
    const run = await running(campaign.id, ['x', 'y']);
    const frees = api.clock.now() + 40 * 60_000;
    await api.redis.set(redisKeys(api.prefix).accountCap(campaign.accountId), String(frees), 'PX', 600_000);
    const body = (await call(api, 'GET', `/v1/runs/${run.id}`, a.token)).body;
    expect(body.waiting).toMatchObject({ reason: 'cap', until: new Date(frees).toISOString(), detail: expect.stringContaining('hourly or daily cap') });
    const targets = (await call(api, 'GET', `/v1/runs/${run.id}/targets`, a.token)).body.items;
    expect(targets[0].waiting).toMatchObject({ reason: 'cap' });
  });

  test("pace: the account's human gap (sendDelaySeconds) holds its next send", async () => {
    const campaign = await createCampaign(api, a);
    const run = await running(campaign.id, ['x']);
    const next = api.clock.now() + 42_000;
    await api.redis.set(redisKeys(api.prefix).accountGap(campaign.accountId), String(next), 'PX', 600_000);
    expect((await call(api, 'GET', `/v1/runs/${run.id}`, a.token)).body.waiting).toMatchObject({ reason: 'pace', until: new Date(next).toISOString() });
  });
});
