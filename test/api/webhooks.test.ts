import { randomUUID } from 'node:crypto';
import { open } from '@metronome/core';
import { ADMIN_TOKEN, call, createAccount, createCampaign, createTenant, fields, seedRun, startApi, type Api, type Tenant } from './harness.js';

// /v1/webhooks: create (secret once), read, change, delete, validation naming the field, the
// allow-list at create and PATCH, tenant isolation, and the outbox rows status changes write.

let api: Api;
let mine: Tenant;
let theirs: Tenant;
beforeAll(async () => {
  api = await startApi('api_webhooks', {
    webhooks: {
      allowedHosts: [
        { host: '*', port: null },
        { host: '127.0.0.1', port: 9999 },
      ],
      retryBaseMs: 1_000,
      retryMaxMs: 60_000,
      timeoutMs: 2_000,
      pollMs: 100,
    },
  });
  mine = await createTenant(api, 'mine');
  theirs = await createTenant(api, 'theirs');
}, 30_000);
afterAll(async () => api.close());

const hook = (extra: Record<string, unknown> = {}) => ({ url: 'https://hooks.example.com/metronome', events: ['run.status', 'account.status'], ...extra });

test('create answers the secret once (whsec_, 32 bytes), stores it sealed, and never shows it again', async () => {
  const created = await call(api, 'POST', '/v1/webhooks', mine.token, hook());
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({ tenantId: mine.id, url: 'https://hooks.example.com/metronome', events: ['run.status', 'account.status'], active: true });
  const secret: string = created.body.secret;
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
  expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);

  const row = await api.db.selectFrom('webhooks').select('secret').where('id', '=', created.body.id).executeTakeFirstOrThrow();
  expect(row.secret.toString('latin1')).not.toContain(secret.slice(6));
  expect(open(row.secret, [api.config.secretsKey]).toString()).toBe(secret);

  const one = await call(api, 'GET', `/v1/webhooks/${created.body.id}`, mine.token);
  expect(one.status).toBe(200);
  expect(one.body.secret).toBeUndefined();
  const list = await call(api, 'GET', '/v1/webhooks', mine.token);
  expect(list.body.items.map((w: { id: string }) => w.id)).toContain(created.body.id);
  expect(JSON.stringify(list.body)).not.toContain(secret);
});

test('bad input is refused with a 400 naming the field', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ events: ['run.status'] }, 'url'],
    [hook({ url: 'ftp://hooks.example.com/' }), 'url'],
    [hook({ url: 'not a url' }), 'url'],
    [hook({ url: 'https://user:pw@hooks.example.com/' }), 'url'],
    [hook({ url: `https://h.example/${'a'.repeat(2100)}` }), 'url'],
    [hook({ events: [] }), 'events'],
    [hook({ events: ['run.status', 'run.status'] }), 'events'],
    [hook({ events: ['campaign.deleted'] }), 'events.0'],
    [hook({ tenantId: theirs.id }), 'tenantId'],
    [hook({ secret: 'whsec_mine' }), ''],
  ];
  for (const [body, field] of cases) {
    const res = await call(api, 'POST', '/v1/webhooks', mine.token, body);
    expect({ body, status: res.status }).toEqual({ body, status: 400 });
    if (field) expect({ body, fields: fields(res) }).toEqual({ body, fields: expect.arrayContaining([field]) });
  }
  const adminWithout = await call(api, 'POST', '/v1/webhooks', ADMIN_TOKEN, hook());
  expect(fields(adminWithout)).toEqual(['tenantId']);
  const adminFor = await call(api, 'POST', '/v1/webhooks', ADMIN_TOKEN, hook({ tenantId: theirs.id }));
  expect(adminFor.status).toBe(201);
  expect(adminFor.body.tenantId).toBe(theirs.id);
});

test('loopback, link-local and private destinations are refused unless WEBHOOK_ALLOWED_HOSTS names them, at create and at PATCH', async () => {
  for (const url of [
    'http://127.0.0.1:8080/h',
    'http://[::1]/h',
    'http://169.254.169.254/latest/meta-data',
    'http://10.0.0.7/h',
    'http://192.168.1.20/h',
    'http://[::ffff:127.0.0.1]/h',
    'http://127.0.0.1:9998/h',
  ]) {
    const res = await call(api, 'POST', '/v1/webhooks', mine.token, hook({ url }));
    expect({ url, status: res.status, fields: fields(res) }).toEqual({ url, status: 400, fields: ['url'] });
  }
  // the one the operator listed, with its port
  const listed = await call(api, 'POST', '/v1/webhooks', mine.token, hook({ url: 'http://127.0.0.1:9999/h' }));
  expect(listed.status).toBe(201);
  const patched = await call(api, 'PATCH', `/v1/webhooks/${listed.body.id}`, mine.token, { url: 'http://10.1.1.1/h' });
  expect(patched.status).toBe(400);
  expect(fields(patched)).toEqual(['url']);
  expect((await call(api, 'GET', `/v1/webhooks/${listed.body.id}`, mine.token)).body.url).toBe('http://127.0.0.1:9999/h');
});

test('PATCH changes url, events and active; DELETE removes the webhook and what it was owed', async () => {
  const created = await call(api, 'POST', '/v1/webhooks', mine.token, hook());
  const id = created.body.id;
  const patched = await call(api, 'PATCH', `/v1/webhooks/${id}`, mine.token, { url: 'https://other.example.org/x', events: ['account.status'], active: false });
  expect(patched.status).toBe(200);
  expect(patched.body).toMatchObject({ url: 'https://other.example.org/x', events: ['account.status'], active: false });
  expect(fields(await call(api, 'PATCH', `/v1/webhooks/${id}`, mine.token, { events: ['nope'] }))).toEqual(['events.0']);
  expect(fields(await call(api, 'PATCH', `/v1/webhooks/${id}`, mine.token, { active: 'yes' }))).toEqual(['active']);
  expect((await call(api, 'DELETE', `/v1/webhooks/${id}`, mine.token)).status).toBe(204);
  expect((await call(api, 'GET', `/v1/webhooks/${id}`, mine.token)).status).toBe(404);
  expect((await call(api, 'DELETE', `/v1/webhooks/${id}`, mine.token)).status).toBe(404);
  const rows = await api.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', id).execute();
  expect(rows).toEqual([]);
});

test("another tenant's webhook is not there for me: 404 like a missing one, and absent from my list", async () => {
  const theirHook = await call(api, 'POST', '/v1/webhooks', theirs.token, hook());
  const id = theirHook.body.id;
  for (const [method, url, body] of [
    ['GET', `/v1/webhooks/${id}`, undefined],
    ['PATCH', `/v1/webhooks/${id}`, { active: false }],
    ['DELETE', `/v1/webhooks/${id}`, undefined],
    ['GET', `/v1/webhooks/${id}/deliveries`, undefined],
    ['POST', `/v1/webhooks/${id}/deliveries/${randomUUID()}/redeliver`, undefined],
  ] as const) {
    const res = await call(api, method, url, mine.token, body);
    const missing = await call(api, method, url.replace(id, randomUUID()), mine.token, body);
    expect({ method, url, status: res.status, body: res.body }).toEqual({ method, url, status: 404, body: missing.body });
  }
  expect(JSON.stringify((await call(api, 'GET', '/v1/webhooks?limit=500', mine.token)).body)).not.toContain(id);
  expect((await call(api, 'GET', `/v1/webhooks/${id}`, theirs.token)).body.active).toBe(true);
  expect(JSON.stringify((await call(api, 'GET', '/v1/webhooks?limit=500', ADMIN_TOKEN)).body)).toContain(id);
});

test('a status change writes one outbox row per subscribed webhook of its tenant, in the same transaction', async () => {
  const tenant = await createTenant(api, 'outbox');
  const other = await createTenant(api, 'outbox-other');
  const both = (await call(api, 'POST', '/v1/webhooks', tenant.token, hook())).body.id;
  const runsOnly = (await call(api, 'POST', '/v1/webhooks', tenant.token, hook({ events: ['run.status'] }))).body.id;
  const paused = (await call(api, 'POST', '/v1/webhooks', tenant.token, hook())).body.id;
  await call(api, 'PATCH', `/v1/webhooks/${paused}`, tenant.token, { active: false });
  const foreign = (await call(api, 'POST', '/v1/webhooks', other.token, hook())).body.id;

  const accountId = await createAccount(api, tenant);
  expect((await call(api, 'PATCH', `/v1/accounts/${accountId}`, tenant.token, { status: 'disabled' })).status).toBe(200);
  // a change that rolls back owes nothing
  await api.db
    .transaction()
    .execute(async (tx) => {
      await tx.updateTable('accounts').set({ status: 'active' }).where('id', '=', accountId).execute();
      throw new Error('rolled back');
    })
    .catch(() => undefined);

  const deliveries = (await call(api, 'GET', `/v1/webhooks/${both}/deliveries`, tenant.token)).body.items;
  expect(deliveries.map((d: { payload: any }) => [d.payload.type, d.payload.data.status, d.payload.data.previousStatus])).toEqual([
    ['account.status', 'disabled', 'active'],
    ['account.status', 'active', null],
  ]);
  expect(deliveries[0]).toMatchObject({
    type: 'account.status',
    subjectId: accountId,
    status: 'pending',
    attempts: 0,
    httpStatus: null,
    error: null,
    lastAttemptAt: null,
    deliveredAt: null,
  });
  expect(deliveries[0].payload.data).toMatchObject({ accountId, platform: 'http' });
  expect(Date.parse(deliveries[0].payload.timestamp)).not.toBeNaN();
  expect(deliveries[0].nextAttemptAt).toEqual(expect.any(String));
  expect((await call(api, 'GET', `/v1/webhooks/${runsOnly}/deliveries`, tenant.token)).body.items).toEqual([]);
  expect((await call(api, 'GET', `/v1/webhooks/${paused}/deliveries`, tenant.token)).body.items).toEqual([]);
  expect((await call(api, 'GET', `/v1/webhooks/${foreign}/deliveries`, other.token)).body.items).toEqual([]);

  // runs: every path that changes a status (here plain SQL, as the scheduler and senders do)
  const campaign = await createCampaign(api, tenant);
  const run = await seedRun(api, campaign.id, 'queued', { 'chat-1': 'pending' });
  await api.db.updateTable('runs').set({ status: 'running' }).where('id', '=', run.id).execute();
  await api.db.updateTable('runs').set({ status: 'success' }).where('id', '=', run.id).execute();
  // a write that leaves the status as it was owes nothing
  await api.db.updateTable('runs').set({ status: 'success' }).where('id', '=', run.id).execute();
  const runEvents = (await call(api, 'GET', `/v1/webhooks/${runsOnly}/deliveries`, tenant.token)).body.items;
  expect(runEvents.map((d: { payload: any }) => [d.payload.data.status, d.payload.data.previousStatus])).toEqual([
    ['success', 'running'],
    ['running', 'queued'],
    ['queued', null],
  ]);
  expect(runEvents[0].payload.data).toMatchObject({ runId: run.id, campaignId: campaign.id, accountId: campaign.accountId, trigger: 'schedule' });
});

test('deliveries page with a cursor; a bad cursor is named', async () => {
  const tenant = await createTenant(api, 'paging');
  const id = (await call(api, 'POST', '/v1/webhooks', tenant.token, hook({ events: ['account.status'] }))).body.id;
  for (let i = 0; i < 3; i++) await createAccount(api, tenant);
  const first = await call(api, 'GET', `/v1/webhooks/${id}/deliveries?limit=2`, tenant.token);
  expect(first.body.items).toHaveLength(2);
  const second = await call(api, 'GET', `/v1/webhooks/${id}/deliveries?limit=2&cursor=${first.body.nextCursor}`, tenant.token);
  expect(second.body.items).toHaveLength(1);
  expect(second.body.nextCursor).toBeNull();
  const ids = [...first.body.items, ...second.body.items].map((d: { id: string }) => d.id);
  expect(new Set(ids).size).toBe(3);
  expect(fields(await call(api, 'GET', `/v1/webhooks/${id}/deliveries?cursor=bm9wZQ`, tenant.token))).toEqual(['cursor']);
  expect(fields(await call(api, 'GET', `/v1/webhooks/${id}/deliveries?limit=0`, tenant.token))).toEqual(['limit']);
});

test('redeliver makes a delivery pending and due now; one of another webhook, or a malformed id, is 404', async () => {
  const tenant = await createTenant(api, 'redeliver');
  const a = (await call(api, 'POST', '/v1/webhooks', tenant.token, hook({ events: ['account.status'] }))).body.id;
  const b = (await call(api, 'POST', '/v1/webhooks', tenant.token, hook({ events: ['account.status'] }))).body.id;
  await createAccount(api, tenant);
  const delivery = (await call(api, 'GET', `/v1/webhooks/${a}/deliveries`, tenant.token)).body.items[0];
  await api.db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', attempts: 9, last_error: 'answered HTTP 500', last_http_status: 500 })
    .where('id', '=', delivery.id)
    .execute();
  const again = await call(api, 'POST', `/v1/webhooks/${a}/deliveries/${delivery.id}/redeliver`, tenant.token);
  expect(again.status).toBe(202);
  expect(again.body).toMatchObject({ id: delivery.id, status: 'pending', attempts: 9, nextAttemptAt: new Date(api.clock.now()).toISOString() });
  expect((await call(api, 'POST', `/v1/webhooks/${b}/deliveries/${delivery.id}/redeliver`, tenant.token)).status).toBe(404);
  // a malformed id names nothing, like every id in a path (CONTRACT §3)
  expect((await call(api, 'POST', `/v1/webhooks/${a}/deliveries/nope/redeliver`, tenant.token)).status).toBe(404);
});

test('/openapi.json documents the webhook routes, and the secret only in the create answer', async () => {
  const res = await call(api, 'GET', '/openapi.json', null);
  expect(res.status).toBe(200);
  for (const path of ['/v1/webhooks', '/v1/webhooks/{id}', '/v1/webhooks/{id}/deliveries', '/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver']) {
    expect(res.body.paths).toHaveProperty([path]);
  }
  expect(res.body.paths['/v1/webhooks'].post.security).toEqual([{ bearer: [] }]);
  expect(res.body.components.schemas.CreatedWebhook.properties).toHaveProperty('secret');
  expect(res.body.components.schemas.Webhook.properties).not.toHaveProperty('secret');
  expect(res.body.components.schemas).toHaveProperty('WebhookDelivery');
});
