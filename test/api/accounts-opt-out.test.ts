import { OptOutRepository } from '@metronome/db';
import { apiForFile, BOT, call, fields, SANDBOX_KEY as KEY, tenantForFile } from './harness.js';

// optOutKeywords on accounts (CONTRACT §3, accounts): WhatsApp defaults, other platforms refused,
// and the suppression list showing the chats that opted out.

const api = apiForFile('api_accounts_opt_out');
const a = tenantForFile(api, 'A');
let n = 0;

const whatsapp = (extra: Record<string, unknown> = {}) => call(api, 'POST', '/v1/accounts', a.token, { platform: 'whatsapp', name: 'Phone', ...extra });
const http = (extra: Record<string, unknown> = {}) =>
  call(api, 'POST', '/v1/accounts', a.token, { platform: 'http', credentials: KEY, name: 'Shop', externalId: `opt-${++n}`, ...extra });

test('a new WhatsApp account listens for STOP and UNSUBSCRIBE; telegram and http accounts for nothing', async () => {
  expect((await whatsapp()).body.optOutKeywords).toEqual(['STOP', 'UNSUBSCRIBE']);
  expect((await call(api, 'POST', '/v1/accounts', a.token, { platform: 'telegram', name: 'Bot', credentials: BOT })).body.optOutKeywords).toEqual([]);
  expect((await http()).body.optOutKeywords).toEqual([]);
  expect((await http({ optOutKeywords: [] })).status).toBe(201);
});

test('keywords are stored trimmed, shown, replaced by PATCH and switched off with []', async () => {
  const created = await whatsapp({ optOutKeywords: [' Arrêt ', 'STOP'] });
  expect(created.status).toBe(201);
  expect(created.body.optOutKeywords).toEqual(['Arrêt', 'STOP']);
  const id = created.body.id;
  expect((await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { optOutKeywords: ['BAJA'] })).body.optOutKeywords).toEqual(['BAJA']);
  expect((await call(api, 'GET', `/v1/accounts/${id}`, a.token)).body.optOutKeywords).toEqual(['BAJA']);
  expect((await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { optOutKeywords: [] })).body.optOutKeywords).toEqual([]);
  // a PATCH that does not name them leaves them
  expect((await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { name: 'Renamed' })).body.optOutKeywords).toEqual([]);
});

test.each([
  [{ optOutKeywords: ['  '] }, 'optOutKeywords.0'],
  [{ optOutKeywords: ['x'.repeat(65)] }, 'optOutKeywords.0'],
  [{ optOutKeywords: Array.from({ length: 21 }, (_, i) => `W${i}`) }, 'optOutKeywords'],
  [{ optOutKeywords: 'STOP' }, 'optOutKeywords'],
])('a bad list %j is a 400 naming %s', async (extra, field) => {
  const res = await whatsapp(extra);
  expect(res.status).toBe(400);
  expect(fields(res)).toEqual([field]);
});

test('keywords on a telegram or http account are a 400 naming optOutKeywords, on POST and PATCH; nothing is saved', async () => {
  const before = (await call(api, 'GET', '/v1/accounts?limit=500', a.token)).body.items.length;
  const tg = await call(api, 'POST', '/v1/accounts', a.token, { platform: 'telegram', name: 'Bot', credentials: BOT, optOutKeywords: ['STOP'] });
  expect(tg.status).toBe(400);
  expect(fields(tg)).toEqual(['optOutKeywords']);
  expect(fields(await http({ optOutKeywords: ['STOP'] }))).toEqual(['optOutKeywords']);
  expect((await call(api, 'GET', '/v1/accounts?limit=500', a.token)).body.items.length).toBe(before);
  const id = (await http()).body.id;
  const patched = await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { optOutKeywords: ['STOP'], name: 'changed?' });
  expect(patched.status).toBe(400);
  expect(fields(patched)).toEqual(['optOutKeywords']);
  expect((await call(api, 'GET', `/v1/accounts/${id}`, a.token)).body).toMatchObject({ name: 'Shop', optOutKeywords: [] });
});

test('a chat that opted out is listed with reason opt_out', async () => {
  const id = (await whatsapp()).body.id;
  await new OptOutRepository(api.db).optOut(id, ['60123456789@s.whatsapp.net', '60123456789', '+60123456789'], new Date(api.clock.now()));
  const listed = await call(api, 'GET', `/v1/accounts/${id}/suppressions`, a.token);
  expect(listed.body.items.map((s: { chatId: string; reason: string }) => [s.chatId, s.reason])).toEqual([
    ['+60123456789', 'opt_out'],
    ['60123456789', 'opt_out'],
    ['60123456789@s.whatsapp.net', 'opt_out'],
  ]);
});
