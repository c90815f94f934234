import { apiForFile, BOT, call, fields, SANDBOX_KEY as KEY, tenantForFile } from './harness.js';

// typing on accounts (CONTRACT §3, accounts): WhatsApp on by default, Telegram off, http refused.

const api = apiForFile('api_accounts_typing');
const a = tenantForFile(api, 'A');
let n = 0;

const post = (body: Record<string, unknown>) => call(api, 'POST', '/v1/accounts', a.token, { name: 'x', ...body });
const http = (extra: Record<string, unknown> = {}) => post({ platform: 'http', credentials: KEY, externalId: `typ-${++n}`, ...extra });

test('a new WhatsApp account types 20 characters a second for at most 5 s; telegram and http accounts do not', async () => {
  expect((await post({ platform: 'whatsapp' })).body.typing).toEqual({ charsPerSecond: 20, maxSeconds: 5 });
  expect((await post({ platform: 'telegram', credentials: BOT })).body.typing).toBeNull();
  expect((await http()).body.typing).toBeNull();
  expect((await post({ platform: 'whatsapp', typing: null })).body.typing).toBeNull();
});

test('typing is stored, shown, changed by PATCH and removed with null; telegram may switch it on', async () => {
  const tg = await post({ platform: 'telegram', credentials: BOT, typing: { charsPerSecond: 15, maxSeconds: 3 } });
  expect(tg.status).toBe(201);
  expect(tg.body.typing).toEqual({ charsPerSecond: 15, maxSeconds: 3 });
  const id = tg.body.id;
  expect((await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { typing: { charsPerSecond: 30, maxSeconds: 8 } })).body.typing).toEqual({
    charsPerSecond: 30,
    maxSeconds: 8,
  });
  expect((await call(api, 'GET', `/v1/accounts/${id}`, a.token)).body.typing).toEqual({ charsPerSecond: 30, maxSeconds: 8 });
  expect((await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { typing: null })).body.typing).toBeNull();
});

test.each([
  [{ typing: { charsPerSecond: 0, maxSeconds: 5 } }, 'typing.charsPerSecond'],
  [{ typing: { charsPerSecond: 20, maxSeconds: 21 } }, 'typing.maxSeconds'],
  [{ typing: { charsPerSecond: 20 } }, 'typing.maxSeconds'],
  [{ typing: { charsPerSecond: 20, maxSeconds: 2.5 } }, 'typing.maxSeconds'],
])('a bad typing %j is a 400 naming %s', async (extra, field) => {
  const res = await post({ platform: 'whatsapp', ...extra });
  expect(res.status).toBe(400);
  expect(fields(res)).toEqual([field]);
});

test('typing on an http account is a 400 naming typing, on POST and PATCH; null is accepted', async () => {
  const refused = await http({ typing: { charsPerSecond: 20, maxSeconds: 5 } });
  expect(refused.status).toBe(400);
  expect(fields(refused)).toEqual(['typing']);
  const created = await http({ typing: null });
  expect(created.status).toBe(201);
  const patched = await call(api, 'PATCH', `/v1/accounts/${created.body.id}`, a.token, { typing: { charsPerSecond: 20, maxSeconds: 5 } });
  expect(patched.status).toBe(400);
  expect(fields(patched)).toEqual(['typing']);
  expect((await call(api, 'GET', `/v1/accounts/${created.body.id}`, a.token)).body.typing).toBeNull();
});
