import { createHash, randomBytes } from 'node:crypto';
import { open } from '@metronome/core';
import { ADMIN_TOKEN, call, createTenant, fields, startApi, type Api, type Tenant } from './harness.js';

// Accounts (sealed credentials, externalId rules, pace defaults) and media uploads.

const KEY = { apiKey: 'sandbox-api-key-0001' };

let api: Api;
let a: Tenant;
let b: Tenant;
beforeAll(async () => {
  api = await startApi('api_accounts', { mediaMaxBytes: 4096 });
  a = await createTenant(api, 'A');
  b = await createTenant(api, 'B');
}, 30_000);
afterAll(async () => api.close());

describe('accounts', () => {
  test('an http account shows its effective pace and no credentials', async () => {
    const res = await call(api, 'POST', '/v1/accounts', a.token, {
      platform: 'http',
      credentials: KEY,
      name: 'Shop',
      externalId: 'shop-1',
      groupConcurrency: 7,
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      tenantId: a.id,
      platform: 'http',
      name: 'Shop',
      externalId: 'shop-1',
      status: 'active',
      blockedUntil: null,
      maxSendPerMinute: 40,
      effectiveMaxSendPerMinute: 40,
      cooling: null,
      groupConcurrency: 7,
      sendDelaySeconds: null,
      hourlyCap: null,
      dailyCap: null,
      warmup: null,
      chatCap: null,
      connection: 'always',
      optOutKeywords: [],
      typing: null,
      platformDeduplicates: false,
      receipts: 'supported',
      // an http account asks for its first chat directory sync when created
      directory: { status: 'syncing', synced: 0, size: 0, lastSyncAt: null, until: null, reason: null },
      proxy: null,
      newChats: null,
      createdAt: expect.any(String),
    });
  });

  test.each([
    ['missing', undefined],
    ['a path', 'a/b'],
    ['a parent directory', '..'],
    ['a host', 'evil.example:80'],
    ['a query', 'x?y=1'],
    ['too long', 'x'.repeat(129)],
  ])('an http account needs a safe externalId (%s → 400 naming externalId)', async (_, externalId) => {
    const res = await call(api, 'POST', '/v1/accounts', a.token, {
      platform: 'http',
      credentials: KEY,
      name: 'x',
      ...(externalId !== undefined && { externalId }),
    });
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(['externalId']);
  });

  test('a telegram bot token is sealed with SECRETS_KEY and never returned', async () => {
    const botToken = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';
    const res = await call(api, 'POST', '/v1/accounts', a.token, { platform: 'telegram', name: 'Bot', credentials: { botToken } });
    expect(res.status).toBe(201);
    expect(JSON.stringify(res.body)).not.toContain(botToken);
    expect(res.body).not.toHaveProperty('credentials');
    const row = await api.db.selectFrom('accounts').select('credentials').where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.credentials?.toString('latin1')).not.toContain(botToken);
    expect(JSON.parse(open(row.credentials as Buffer, [api.config.secretsKey]).toString('utf8'))).toEqual({ botToken });
    const read = await call(api, 'GET', `/v1/accounts/${res.body.id}`, a.token);
    expect(JSON.stringify(read.body)).not.toContain(botToken);
  });

  test('telegram needs credentials.botToken; unknown fields are rejected', async () => {
    const missing = await call(api, 'POST', '/v1/accounts', a.token, { platform: 'telegram', name: 'Bot' });
    expect(fields(missing)).toEqual(['credentials']);
    const extra = await call(api, 'POST', '/v1/accounts', a.token, { platform: 'whatsapp', name: 'W', colour: 'red' });
    expect(extra.status).toBe(400);
    expect(fields(extra)).toEqual(['colour']);
    const platform = await call(api, 'POST', '/v1/accounts', a.token, { platform: 'fax', name: 'F' });
    expect(fields(platform)).toEqual(['platform']);
  });

  test('a whatsapp account starts disconnected until it is paired', async () => {
    const res = await call(api, 'POST', '/v1/accounts', a.token, { platform: 'whatsapp', name: 'Phone' });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('disconnected');
  });

  test('pace limits are checked: 1–60,000 per minute, 1–50 chats', async () => {
    const res = await call(api, 'POST', '/v1/accounts', a.token, {
      platform: 'http',
      credentials: KEY,
      name: 'x',
      externalId: 'x',
      maxSendPerMinute: 0,
      groupConcurrency: 51,
    });
    expect(fields(res).sort()).toEqual(['groupConcurrency', 'maxSendPerMinute']);
  });

  test('tenantId: only the admin names it, and the admin must', async () => {
    const byTenant = await call(api, 'POST', '/v1/accounts', a.token, { platform: 'http', credentials: KEY, name: 'x', externalId: 'x', tenantId: a.id });
    expect(fields(byTenant)).toEqual(['tenantId']);
    const adminWithout = await call(api, 'POST', '/v1/accounts', ADMIN_TOKEN, { platform: 'http', credentials: KEY, name: 'x', externalId: 'x' });
    expect(fields(adminWithout)).toEqual(['tenantId']);
    const adminUnknown = await call(api, 'POST', '/v1/accounts', ADMIN_TOKEN, {
      platform: 'http',
      credentials: KEY,
      name: 'x',
      externalId: 'x',
      tenantId: '00000000-0000-4000-8000-000000000000',
    });
    expect(fields(adminUnknown)).toEqual(['tenantId']);
    const admin = await call(api, 'POST', '/v1/accounts', ADMIN_TOKEN, {
      platform: 'http',
      credentials: KEY,
      name: 'for B',
      externalId: 'b-1',
      tenantId: b.id,
    });
    expect(admin.status).toBe(201);
    expect(admin.body.tenantId).toBe(b.id);
  });

  test('list is newest first, per tenant, with a cursor; the admin sees every tenant', async () => {
    const t = await createTenant(api, 'lister');
    const ids = [];
    for (let i = 0; i < 3; i++)
      ids.push((await call(api, 'POST', '/v1/accounts', t.token, { platform: 'http', credentials: KEY, name: `n${i}`, externalId: `n${i}` })).body.id);
    const first = await call(api, 'GET', '/v1/accounts?limit=2', t.token);
    expect(first.body.items.map((x: { id: string }) => x.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await call(api, 'GET', `/v1/accounts?limit=2&cursor=${first.body.nextCursor}`, t.token);
    expect(second.body).toEqual({ items: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
    const all = await call(api, 'GET', '/v1/accounts?limit=500', ADMIN_TOKEN);
    expect(new Set(all.body.items.map((x: { tenantId: string }) => x.tenantId)).size).toBeGreaterThan(1);
    expect((await call(api, 'GET', '/v1/accounts?cursor=bm9wZQ', t.token)).body.error.details).toEqual([{ field: 'cursor', message: expect.any(String) }]);
    expect(fields(await call(api, 'GET', '/v1/accounts?limit=501', t.token))).toEqual(['limit']);
  });

  test('PATCH changes status and pace; null returns to the default', async () => {
    const id = (await call(api, 'POST', '/v1/accounts', a.token, { platform: 'http', credentials: KEY, name: 'p', externalId: 'p', maxSendPerMinute: 10 })).body
      .id;
    const patched = await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { status: 'disabled', maxSendPerMinute: null, name: 'renamed' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ status: 'disabled', maxSendPerMinute: 40, name: 'renamed' });
    const row = await api.db.selectFrom('accounts').select(['max_send_per_minute', 'status']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toEqual({ max_send_per_minute: null, status: 'disabled' });
    const bad = await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { status: 'pairing' });
    expect(fields(bad)).toEqual(['status']);
  });

  test('PATCH credentials replaces a telegram bot token, sealed, and brings a disconnected bot back', async () => {
    const id = (
      await call(api, 'POST', '/v1/accounts', a.token, { platform: 'telegram', name: 'Bot', credentials: { botToken: '111:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' } })
    ).body.id;
    await api.db.updateTable('accounts').set({ status: 'disconnected' }).where('id', '=', id).execute();
    const botToken = '111:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
    const patched = await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { credentials: { botToken } });
    expect(patched.status).toBe(200);
    expect(patched.body.status).toBe('active');
    expect(JSON.stringify(patched.body)).not.toContain(botToken);
    const row = await api.db.selectFrom('accounts').select('credentials').where('id', '=', id).executeTakeFirstOrThrow();
    expect(JSON.parse(open(row.credentials as Buffer, [api.config.secretsKey]).toString('utf8'))).toEqual({ botToken });
    // an explicit status wins over the reconnect
    const kept = await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { credentials: { botToken }, status: 'disabled' });
    expect(kept.body.status).toBe('disabled');
    expect(fields(await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { credentials: { botToken: 'nope' } }))).toEqual(['credentials.botToken']);
    expect((await call(api, 'PATCH', `/v1/accounts/${id}`, b.token, { credentials: { botToken } })).status).toBe(404);
  });

  test('PATCH credentials of the other platform, or on a whatsapp account, is refused, naming the field', async () => {
    const id = (await call(api, 'POST', '/v1/accounts', a.token, { platform: 'http', credentials: KEY, name: 'h', externalId: 'h-cred' })).body.id;
    const res = await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { credentials: { botToken: '111:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB' } });
    expect(res.status).toBe(400);
    expect(fields(res)).toEqual(['credentials.botToken']);
    const row = await api.db.selectFrom('accounts').select('credentials').where('id', '=', id).executeTakeFirstOrThrow();
    expect(JSON.parse(open(row.credentials as Buffer, [api.config.secretsKey]).toString('utf8'))).toEqual(KEY);
    const phone = (await call(api, 'POST', '/v1/accounts', a.token, { platform: 'whatsapp', name: 'W' })).body.id;
    expect(fields(await call(api, 'PATCH', `/v1/accounts/${phone}`, a.token, { credentials: KEY }))).toEqual(['credentials']);
  });

  test('a WhatsApp account is not made active by PATCH: only pairing does that (409 naming the pair route)', async () => {
    const created = await call(api, 'POST', '/v1/accounts', a.token, { platform: 'whatsapp', name: 'Phone' });
    expect(created.body.status).toBe('disconnected');
    const res = await call(api, 'PATCH', `/v1/accounts/${created.body.id}`, a.token, { status: 'active' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    expect(res.body.error.message).toContain(`/v1/accounts/${created.body.id}/pair`);
    expect((await call(api, 'GET', `/v1/accounts/${created.body.id}`, a.token)).body.status).toBe('disconnected');
    // other changes still apply
    expect((await call(api, 'PATCH', `/v1/accounts/${created.body.id}`, a.token, { name: 'Shop phone' })).body.name).toBe('Shop phone');
  });

  test("another tenant's account answers 404 exactly like a missing one", async () => {
    const id = (await call(api, 'POST', '/v1/accounts', a.token, { platform: 'http', credentials: KEY, name: 'mine', externalId: 'mine' })).body.id;
    const foreign = await call(api, 'GET', `/v1/accounts/${id}`, b.token);
    const missing = await call(api, 'GET', '/v1/accounts/00000000-0000-4000-8000-000000000000', b.token);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect((await call(api, 'PATCH', `/v1/accounts/${id}`, b.token, { name: 'stolen' })).status).toBe(404);
    expect((await call(api, 'GET', '/v1/accounts/not-a-uuid', b.token)).status).toBe(404);
    expect((await call(api, 'GET', `/v1/accounts/${id}`, ADMIN_TOKEN)).status).toBe(200);
  });
});

describe('media', () => {
  async function upload(token: string, bytes: Buffer, contentType?: string, query = '') {
    const res = await api.app.inject({
      method: 'POST',
      url: `/v1/media${query}`,
      headers: { authorization: `Bearer ${token}`, ...(contentType !== undefined && { 'content-type': contentType }) },
      payload: bytes,
    });
    return { status: res.statusCode, body: JSON.parse(res.body) };
  }

  test('the raw body is stored with its sha256, size, media type and filename', async () => {
    const bytes = randomBytes(3000);
    const res = await upload(a.token, bytes, 'image/PNG; charset=binary', '?filename=photo.png');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      tenantId: a.id,
      contentType: 'image/png',
      size: 3000,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      filename: 'photo.png',
      createdAt: expect.any(String),
    });
    const row = await api.db.selectFrom('media').select('bytes').where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row.bytes?.equals(bytes)).toBe(true);
    expect((await call(api, 'GET', `/v1/media/${res.body.id}`, a.token)).body).toEqual(res.body);
    expect((await call(api, 'GET', '/v1/media', a.token)).body.items[0]).toEqual(res.body);
  });

  test('larger than MEDIA_MAX_BYTES → 413 too_large', async () => {
    const res = await upload(a.token, randomBytes(4097), 'image/png');
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('too_large');
  });

  test('an empty body, a missing or malformed Content-Type, a bad filename → 400 naming it', async () => {
    expect((await upload(a.token, Buffer.alloc(0), 'image/png')).body.error.details[0].field).toBe('body');
    expect((await upload(a.token, randomBytes(10), 'not a type')).body.error.details[0].field).toBe('content-type');
    expect((await upload(a.token, randomBytes(10), undefined)).body.error.details[0].field).toBe('content-type');
    expect((await upload(a.token, randomBytes(10), 'image/png', '?filename=..%2Fetc%2Fpasswd')).body.error.details[0].field).toBe('filename');
  });

  test("another tenant's media answers 404", async () => {
    const mine = await upload(a.token, randomBytes(10), 'image/png');
    expect((await call(api, 'GET', `/v1/media/${mine.body.id}`, b.token)).status).toBe(404);
    expect((await call(api, 'GET', '/v1/media', b.token)).body.items).toEqual([]);
  });
});
