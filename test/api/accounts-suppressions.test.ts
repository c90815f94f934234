import { call, createTenant, fields, startApi, type Api, type Tenant } from './harness.js';

// An account's suppression list: GET/POST/DELETE /v1/accounts/{id}/suppressions (CONTRACT §3).

const KEY = { apiKey: 'sandbox-api-key-0001' };

let api: Api;
let a: Tenant;
let b: Tenant;
let n = 0;
beforeAll(async () => {
  api = await startApi('api_suppressions');
  a = await createTenant(api, 'A');
  b = await createTenant(api, 'B');
}, 30_000);
afterAll(async () => api.close());

const account = async (tenant: Tenant) =>
  (await call(api, 'POST', '/v1/accounts', tenant.token, { platform: 'http', credentials: KEY, name: 'x', externalId: `sup-${++n}` })).body.id as string;

test('operators add chats, list them in chat order page by page, and take one off', async () => {
  const id = await account(a);
  expect((await call(api, 'POST', `/v1/accounts/${id}/suppressions`, a.token, { chatIds: ['c', 'a', 'b', 'a'] })).body).toEqual({ added: 3 });
  expect((await call(api, 'POST', `/v1/accounts/${id}/suppressions`, a.token, { chatIds: ['b', 'd'] })).body).toEqual({ added: 1 });
  const first = await call(api, 'GET', `/v1/accounts/${id}/suppressions?limit=3`, a.token);
  expect(first.body.items).toEqual(['a', 'b', 'c'].map((chatId) => ({ chatId, reason: 'operator', createdAt: new Date(api.clock.now()).toISOString() })));
  const second = await call(api, 'GET', `/v1/accounts/${id}/suppressions?limit=3&cursor=${first.body.nextCursor}`, a.token);
  expect(second.body).toEqual({ items: [expect.objectContaining({ chatId: 'd' })], nextCursor: null });
  expect((await call(api, 'DELETE', `/v1/accounts/${id}/suppressions/b`, a.token)).status).toBe(204);
  expect((await call(api, 'DELETE', `/v1/accounts/${id}/suppressions/b`, a.token)).status).toBe(404);
  expect((await call(api, 'GET', `/v1/accounts/${id}/suppressions`, a.token)).body.items.map((s: { chatId: string }) => s.chatId)).toEqual(['a', 'c', 'd']);
});

test("another tenant's account is not found, whatever the verb", async () => {
  const id = await account(a);
  await call(api, 'POST', `/v1/accounts/${id}/suppressions`, a.token, { chatIds: ['x'] });
  expect((await call(api, 'GET', `/v1/accounts/${id}/suppressions`, b.token)).status).toBe(404);
  expect((await call(api, 'POST', `/v1/accounts/${id}/suppressions`, b.token, { chatIds: ['y'] })).status).toBe(404);
  expect((await call(api, 'DELETE', `/v1/accounts/${id}/suppressions/x`, b.token)).status).toBe(404);
  expect((await call(api, 'GET', `/v1/accounts/${id}/suppressions`, a.token)).body.items).toHaveLength(1);
});

test.each([
  [{ chatIds: [] }, 'chatIds'],
  [{ chatIds: ['ok', 'bad\nline'] }, 'chatIds.1'],
  [{}, 'chatIds'],
])('a bad body %j is a 400 naming %s', async (body, field) => {
  const id = await account(a);
  const res = await call(api, 'POST', `/v1/accounts/${id}/suppressions`, a.token, body);
  expect(res.status).toBe(400);
  expect(fields(res)).toEqual([field]);
});
