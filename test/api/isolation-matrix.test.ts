import { randomUUID } from 'node:crypto';
import { ADMIN_TOKEN, call, campaignBody, createCampaign, createTenant, seedRun, startApi, type Api, type Tenant } from './harness.js';

// Tenant isolation on EVERY route. The route list comes from the app itself (an onRoute hook),
// so a route added later lands in this matrix and fails it until its isolation is stated here.

const routes: { method: string; url: string }[] = [];
let api: Api;
let mine: Tenant;
let theirs: Tenant;
/** the foreign tenant's resources, by the path segment that names their kind */
const foreign: Record<string, string> = {};
let foreignRunTargets: string[];
/** a delivery owed to the foreign tenant's webhook */
let foreignDelivery: string;

beforeAll(async () => {
  api = await startApi(
    'api_isolation',
    {},
    {
      onRoute: (route) => {
        for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, url: route.url });
      },
    },
  );
  mine = await createTenant(api, 'mine');
  theirs = await createTenant(api, 'theirs');
  await createCampaign(api, mine);
  // their webhook first, so their account's creation owes it a delivery
  const webhook = await call(api, 'POST', '/v1/webhooks', theirs.token, { url: 'https://hooks.example.com/theirs', events: ['account.status'] });
  expect(webhook.status).toBe(201);
  const campaign = await createCampaign(api, theirs);
  const media = await api.app.inject({
    method: 'POST',
    url: '/v1/media?filename=a.png',
    headers: { authorization: `Bearer ${theirs.token}`, 'content-type': 'image/png' },
    payload: Buffer.from([1, 2, 3]),
  });
  expect(media.statusCode).toBe(201);
  foreign['accounts'] = campaign.accountId;
  foreign['campaigns'] = campaign.id;
  foreign['media'] = JSON.parse(media.body).id;
  foreign['runs'] = (await seedRun(api, campaign.id, 'paused', { 'their-chat-1': 'pending', 'their-chat-2': 'failed' })).id;
  foreignRunTargets = ['their-chat-1', 'their-chat-2'];
  foreign['webhooks'] = webhook.body.id;
  const audience = await call(api, 'POST', '/v1/audiences', theirs.token, {
    name: 'theirs',
    members: [{ chatId: 'their-member-1', vars: { name: 'Theirs' } }],
  });
  expect(audience.status).toBe(201);
  foreign['audiences'] = audience.body.id;
  const delivery = await api.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', webhook.body.id).executeTakeFirstOrThrow();
  foreignDelivery = delivery.id;
  foreign['tenants'] = theirs.id;
}, 30_000);
afterAll(async () => api.close());

const v1Routes = () => routes.filter((r) => r.url.startsWith('/v1/'));

/** The route with its `:id` filled by the foreign tenant's resource of that kind. */
function foreignUrl(url: string): string {
  const kind = url.split('/')[2] ?? '';
  const id = foreign[kind];
  if (id === undefined) throw new Error(`no foreign ${kind} for ${url}: add one to the isolation matrix`);
  return url.replace(':id', id).replace(':deliveryId', foreignDelivery);
}

function body(method: string, url: string): unknown {
  if (method === 'PATCH' && url.startsWith('/v1/accounts')) return { name: 'taken over', status: 'disabled' };
  if (method === 'PATCH' && url.startsWith('/v1/campaigns')) return { name: 'taken over', active: false };
  if (method === 'PATCH' && url.startsWith('/v1/webhooks')) return { url: 'https://taken.example.com/over', active: false };
  if (method === 'POST' && url.endsWith('/suppressions')) return { chatIds: ['taken-over'] };
  if (method === 'PATCH' && url.startsWith('/v1/audiences')) return { name: 'taken over' };
  if (method === 'POST' && url.endsWith('/members')) return { members: [{ chatId: 'taken-over' }] };
  if (method === 'DELETE' && url.endsWith('/members')) return { chatIds: ['their-member-1'] };
  if (method === 'POST' && url.endsWith('/test-sends')) return { chatId: 'taken-over' };
  if (method === 'POST' && url.endsWith('/telegram-sign-in')) return { phone: '+447700900123' };
  if (method === 'POST' && url.endsWith('/session')) return { creds: {} };
  if (method === 'POST' && url.endsWith('/telegram-sign-in/code')) return { code: '12345' };
  if (method === 'POST' && url.endsWith('/telegram-sign-in/password')) return { password: 'taken over' };
  if (method === 'POST' || method === 'PATCH') return {};
  return undefined;
}

test('the matrix sees the routes of CONTRACT §3', () => {
  const names = v1Routes().map((r) => `${r.method} ${r.url}`);
  expect(names).toEqual(
    expect.arrayContaining([
      'POST /v1/tenants',
      'GET /v1/me',
      'POST /v1/accounts',
      'PATCH /v1/accounts/:id',
      'POST /v1/accounts/:id/cooling/lift',
      'GET /v1/media/:id',
      'DELETE /v1/campaigns/:id',
      'POST /v1/campaigns/:id/runs',
      'GET /v1/runs/:id/targets',
      'POST /v1/runs/:id/retry-failed',
      'GET /v1/events',
    ]),
  );
});

test('every /v1 route without a token answers 401 with the error body', async () => {
  for (const route of v1Routes()) {
    const url = route.url.includes(':id') ? foreignUrl(route.url) : route.url;
    const res = await call(api, route.method, url, null, body(route.method, route.url));
    expect({ route: `${route.method} ${route.url}`, status: res.status, code: res.body?.error?.code }).toEqual({
      route: `${route.method} ${route.url}`,
      status: 401,
      code: 'unauthorized',
    });
  }
});

test("every /v1 route with an id answers 404 for another tenant's resource, exactly as for a missing one", async () => {
  const withId = v1Routes().filter((r) => r.url.includes(':id'));
  expect(withId.length).toBeGreaterThanOrEqual(12);
  for (const route of withId) {
    const name = `${route.method} ${route.url}`;
    const res = await call(api, route.method, foreignUrl(route.url), mine.token, body(route.method, route.url));
    const missing = await call(
      api,
      route.method,
      route.url.replace(':id', randomUUID()).replace(':deliveryId', randomUUID()),
      mine.token,
      body(route.method, route.url),
    );
    // a tenant token may delete no tenant at all (401), theirs or a missing one alike
    const status = route.url.startsWith('/v1/tenants/') ? 401 : 404;
    expect({ name, status: res.status, body: res.body }).toEqual({ name, status, body: missing.body });
  }
  // Nothing of theirs changed, and no run was started on their campaign.
  const account = await call(api, 'GET', `/v1/accounts/${foreign['accounts']}`, theirs.token);
  expect(account.body).toMatchObject({ name: 'account', status: 'active' });
  const campaign = await call(api, 'GET', `/v1/campaigns/${foreign['campaigns']}`, theirs.token);
  expect(campaign.body).toMatchObject({ name: 'Morning reminder', active: true });
  const run = await call(api, 'GET', `/v1/runs/${foreign['runs']}`, theirs.token);
  expect(run.body.status).toBe('paused');
  const runs = await api.db.selectFrom('runs').select('id').where('campaign_id', '=', foreign['campaigns']!).execute();
  expect(runs).toHaveLength(1);
  const audience = await call(api, 'GET', `/v1/audiences/${foreign['audiences']}`, theirs.token);
  expect(audience.body).toMatchObject({ name: 'theirs', memberCount: 1 });
  const webhook = await call(api, 'GET', `/v1/webhooks/${foreign['webhooks']}`, theirs.token);
  expect(webhook.body).toMatchObject({ url: 'https://hooks.example.com/theirs', active: true });
  const delivery = await api.db.selectFrom('webhook_deliveries').select(['status', 'attempts']).where('id', '=', foreignDelivery).executeTakeFirstOrThrow();
  expect(delivery).toEqual({ status: 'pending', attempts: 0 });
});

// Routes without an id: each states what isolation means for it. A new one must be added here.
const withoutId: Record<string, () => Promise<void>> = {
  'POST /v1/tenants': async () => {
    const res = await call(api, 'POST', '/v1/tenants', mine.token, { name: 'sneaky' });
    expect(res.status).toBe(401);
  },
  'GET /v1/tenants': async () => {
    const res = await call(api, 'GET', '/v1/tenants', mine.token);
    expect(res.status).toBe(401);
    expect(JSON.stringify(res.body)).not.toContain(theirs.id);
  },
  'GET /v1/me': async () => {
    expect((await call(api, 'GET', '/v1/me', mine.token)).body).toEqual({ tenantId: mine.id, admin: false, limits: expect.any(Object) });
  },
  'GET /v1/account-defaults': async () => {
    // the deployment's defaults, the same for every tenant: nothing of any tenant's in them
    const res = await call(api, 'GET', '/v1/account-defaults', mine.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual((await call(api, 'GET', '/v1/account-defaults', theirs.token)).body);
    expect(JSON.stringify(res.body)).not.toContain(theirs.id);
  },
  'POST /v1/accounts': async () => {
    const res = await call(api, 'POST', '/v1/accounts', mine.token, {
      platform: 'http',
      credentials: { apiKey: 'sandbox-api-key-0001' },
      name: 'x',
      externalId: 'x-1',
      tenantId: theirs.id,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('tenantId');
  },
  'POST /v1/media': async () => {
    const res = await api.app.inject({
      method: 'POST',
      url: `/v1/media?tenantId=${theirs.id}`,
      headers: { authorization: `Bearer ${mine.token}`, 'content-type': 'image/png' },
      payload: Buffer.from([1]),
    });
    expect(res.statusCode).toBe(400);
  },
  'POST /v1/campaigns': async () => {
    // their account, their media: neither can be named by me
    const withTheirAccount = await call(api, 'POST', '/v1/campaigns', mine.token, campaignBody(foreign['accounts']!));
    expect(withTheirAccount.status).toBe(400);
    const myAccount = (await call(api, 'GET', '/v1/accounts', mine.token)).body.items[0].id;
    const withTheirMedia = await call(
      api,
      'POST',
      '/v1/campaigns',
      mine.token,
      campaignBody(myAccount, { messages: [{ type: 'media', mediaId: foreign['media'] }] }),
    );
    expect(withTheirMedia.status).toBe(400);
    const asThem = await call(api, 'POST', '/v1/campaigns', mine.token, { ...campaignBody(myAccount), tenantId: theirs.id });
    expect(asThem.status).toBe(400);
    const withTheirAudience = await call(api, 'POST', '/v1/campaigns', mine.token, campaignBody(myAccount, { audienceIds: [foreign['audiences']] }));
    expect(withTheirAudience.status).toBe(400);
    expect(withTheirAudience.body.error.details).toEqual([{ field: 'audienceIds.0', message: 'no such audience' }]);
  },
  'POST /v1/campaigns/preview': async () => {
    // validated as a create: their account, their media or their tenant cannot be named
    const myAccount = (await call(api, 'GET', '/v1/accounts', mine.token)).body.items[0].id;
    for (const body of [
      campaignBody(foreign['accounts']!),
      campaignBody(myAccount, { messages: [{ type: 'media', mediaId: foreign['media'] }] }),
      { ...campaignBody(myAccount), tenantId: theirs.id },
    ]) {
      const res = await call(api, 'POST', '/v1/campaigns/preview', mine.token, body);
      expect(res.status).toBe(400);
    }
    expect((await call(api, 'POST', '/v1/campaigns/preview', mine.token, campaignBody(myAccount))).status).toBe(200);
  },
  'POST /v1/webhooks': async () => {
    const res = await call(api, 'POST', '/v1/webhooks', mine.token, { url: 'https://hooks.example.com/x', events: ['run.status'], tenantId: theirs.id });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('tenantId');
  },
  'GET /v1/webhooks': () => listHasNone('/v1/webhooks'),
  'POST /v1/audiences': async () => {
    const res = await call(api, 'POST', '/v1/audiences', mine.token, { name: 'x', tenantId: theirs.id });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('tenantId');
  },
  'GET /v1/audiences': () => listHasNone('/v1/audiences'),
  'GET /v1/accounts': () => listHasNone('/v1/accounts'),
  'GET /v1/media': () => listHasNone('/v1/media'),
  'GET /v1/campaigns': () => listHasNone('/v1/campaigns'),
  'GET /v1/runs': async () => {
    await listHasNone('/v1/runs');
    await listHasNone(`/v1/runs?campaignId=${foreign['campaigns']}`);
    await listHasNone(`/v1/runs?accountId=${foreign['accounts']}`);
    await listHasNone(`/v1/runs?tenantId=${theirs.id}`);
  },
  'POST /v1/chats/erase': async () => {
    const asThem = await call(api, 'POST', '/v1/chats/erase', mine.token, { chatId: 'their-chat-1', tenantId: theirs.id });
    expect(asThem.status).toBe(400);
    // erasing a chat of the same id in my tenant leaves theirs where it was
    expect((await call(api, 'POST', '/v1/chats/erase', mine.token, { chatId: 'their-chat-1' })).status).toBe(200);
    const targets = await call(api, 'GET', `/v1/runs/${foreign['runs']}/targets`, theirs.token);
    expect(targets.body.items.map((t: { chatId: string }) => t.chatId)).toEqual(foreignRunTargets);
  },
  'GET /v1/export': async () => {
    expect((await call(api, 'GET', `/v1/export?tenantId=${theirs.id}`, mine.token)).status).toBe(400);
    const mineText = (await api.app.inject({ method: 'GET', url: '/v1/export', headers: { authorization: `Bearer ${mine.token}` } })).body;
    expect(mineText).toContain(mine.id);
    for (const id of [...Object.values(foreign), theirs.id, ...foreignRunTargets]) expect(mineText).not.toContain(id);
  },
  // SSE: a stream per tenant is checked in events.test.ts ("a tenant sees only its own runs' events").
  'GET /v1/events': async () => {},
  // An account's API key, never a tenant token; a key records only its account's messages
  // (another account's are ignored: test/e2e/receipts.test.ts).
  'POST /v1/platform/receipts': async () => {
    const res = await call(api, 'POST', '/v1/platform/receipts', mine.token, {
      receipts: [{ messageId: 'm', chatId: 'c', status: 'read', at: '2026-01-01T00:00:00Z' }],
    });
    expect(res.status).toBe(401);
  },
};

async function listHasNone(url: string): Promise<void> {
  const res = await call(api, 'GET', url, mine.token);
  if (res.status !== 200) {
    expect(res.status).toBe(400);
    return;
  }
  const text = JSON.stringify(res.body);
  for (const id of [...Object.values(foreign), theirs.id, ...foreignRunTargets]) expect(text).not.toContain(id);
  // and the admin does see theirs: the check above can fail
  const admin = JSON.stringify((await call(api, 'GET', url, ADMIN_TOKEN)).body);
  expect(Object.values(foreign).some((id) => admin.includes(id))).toBe(true);
}

test('every /v1 route without an id is isolated as stated', async () => {
  const names = v1Routes()
    .filter((r) => !r.url.includes(':id'))
    .map((r) => `${r.method} ${r.url}`);
  for (const name of names) {
    const check = withoutId[name];
    if (!check) throw new Error(`${name} is not in the isolation matrix: say what isolation means for it`);
    await check();
  }
});
