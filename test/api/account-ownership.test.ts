import { open } from '@metronome/core';
import { ADMIN_TOKEN, apiForFile, call, comparable, fields, type Tenant, tenantForFile } from './harness.js';

// One (platform, externalId) belongs to one account, so to one tenant; http accounts carry an
// API key, sealed and never returned. A taken externalId answers exactly what a malformed one
// does, so the answer does not tell that the id exists, let alone whose it is.

const api = apiForFile('api_ownership');
const a = tenantForFile(api, 'A');
const c = tenantForFile(api, 'C');

const httpAccount = (tenant: Tenant, externalId: string, apiKey = 'key-of-a-0000000001', extra: Record<string, unknown> = {}) =>
  call(api, 'POST', '/v1/accounts', tenant.token, { platform: 'http', name: 'x', externalId, credentials: { apiKey }, ...extra });

test('a taken externalId answers the very 400 a malformed one gets, whichever tenant holds it, and nothing is saved', async () => {
  expect((await httpAccount(a, 'shop-a')).status).toBe(201);
  const malformed = await httpAccount(c, 'shop/a', 'key-of-c-0000000001');
  expect(malformed.status).toBe(400);
  expect(fields(malformed)).toEqual(['externalId']);
  const taken = await httpAccount(c, 'shop-a', 'key-of-c-0000000001');
  expect(comparable(taken)).toEqual(comparable(malformed));
  // the holder itself, and the admin on behalf of another tenant, get the same answer
  expect(comparable(await httpAccount(a, 'shop-a', 'key-of-a-0000000002'))).toEqual(comparable(malformed));
  expect(
    comparable(
      await call(api, 'POST', '/v1/accounts', ADMIN_TOKEN, {
        platform: 'http',
        name: 'x',
        externalId: 'shop-a',
        credentials: { apiKey: 'key-of-c-0000000001' },
        tenantId: c.id,
      }),
    ),
  ).toEqual(comparable(malformed));
  const rows = await api.db.selectFrom('accounts').select(['tenant_id']).where('external_id', '=', 'shop-a').execute();
  expect(rows).toEqual([{ tenant_id: a.id }]);
  // ids are per platform: a telegram account may carry the same label
  const bot = await call(api, 'POST', '/v1/accounts', c.token, {
    platform: 'telegram',
    name: 'bot',
    externalId: 'shop-a',
    credentials: { botToken: '111:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
  });
  expect(bot.status).toBe(201);
});

test('PATCH cannot move an account to another externalId', async () => {
  const mine = await httpAccount(c, 'shop-c', 'key-of-c-0000000001');
  const res = await call(api, 'PATCH', `/v1/accounts/${mine.body.id}`, c.token, { externalId: 'shop-a' });
  expect(res.status).toBe(400);
  expect(fields(res)).toEqual(['externalId']);
  expect((await call(api, 'GET', `/v1/accounts/${mine.body.id}`, c.token)).body.externalId).toBe('shop-c');
});

test('an http account needs credentials.apiKey: 16+ header-safe characters', async () => {
  const missing = await call(api, 'POST', '/v1/accounts', a.token, { platform: 'http', name: 'x', externalId: 'no-key' });
  expect(fields(missing)).toEqual(['credentials']);
  expect(fields(await httpAccount(a, 'short-key', 'too-short'))).toEqual(['credentials.apiKey']);
  expect(fields(await httpAccount(a, 'spaced-key', 'has a space in it, see'))).toEqual(['credentials.apiKey']);
  expect(
    fields(
      await call(api, 'POST', '/v1/accounts', a.token, {
        platform: 'http',
        name: 'x',
        externalId: 'bot-key',
        credentials: { botToken: '111:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
      }),
    ),
  ).toEqual(expect.arrayContaining(['credentials.apiKey']));
  expect(await api.db.selectFrom('accounts').select('id').where('external_id', 'in', ['no-key', 'short-key', 'spaced-key', 'bot-key']).execute()).toEqual([]);
});

test('the API key is sealed, never returned, and PATCH replaces it, bringing a disconnected account back', async () => {
  const apiKey = 'sealed-api-key-0000000000000001';
  const created = await httpAccount(a, 'sealed', apiKey);
  expect(created.status).toBe(201);
  expect(JSON.stringify(created.body)).not.toContain(apiKey);
  const sealedRow = async () =>
    await api.db.selectFrom('accounts').select(['credentials', 'status']).where('id', '=', created.body.id).executeTakeFirstOrThrow();
  const row = await sealedRow();
  expect(row.credentials?.toString('latin1')).not.toContain(apiKey);
  expect(JSON.parse(open(row.credentials as Buffer, [api.config.secretsKey]).toString('utf8'))).toEqual({ apiKey });
  expect(JSON.stringify((await call(api, 'GET', '/v1/accounts?limit=500', a.token)).body)).not.toContain(apiKey);

  await api.db.updateTable('accounts').set({ status: 'disconnected' }).where('id', '=', created.body.id).execute();
  const next = 'sealed-api-key-0000000000000002';
  const patched = await call(api, 'PATCH', `/v1/accounts/${created.body.id}`, a.token, { credentials: { apiKey: next } });
  expect(patched.status).toBe(200);
  expect(patched.body.status).toBe('active');
  expect(JSON.stringify(patched.body)).not.toContain(next);
  expect(JSON.parse(open((await sealedRow()).credentials as Buffer, [api.config.secretsKey]).toString('utf8'))).toEqual({ apiKey: next });
  expect(fields(await call(api, 'PATCH', `/v1/accounts/${created.body.id}`, a.token, { credentials: {} }))).toEqual(['credentials.apiKey']);
  expect((await call(api, 'PATCH', `/v1/accounts/${created.body.id}`, c.token, { credentials: { apiKey: next } })).status).toBe(404);
});
