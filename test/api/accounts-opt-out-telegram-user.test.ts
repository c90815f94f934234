import { apiForFile, call, tenantForFile } from './harness.js';

// optOutKeywords on telegram_user accounts (CONTRACT §3, accounts, "Opt-out by reply"): a Telegram
// user account reads private texts as WhatsApp's do, so it takes keywords, and a new one gets
// WhatsApp's defaults; the defaults the API answers say so.

const api = apiForFile('api_accounts_opt_out_tg_user');
const a = tenantForFile(api, 'A');

test('a new telegram_user account listens for STOP and UNSUBSCRIBE; POST and PATCH set its keywords, [] switches them off', async () => {
  const created = await call(api, 'POST', '/v1/accounts', a.token, { platform: 'telegram_user', name: 'Me' });
  expect(created.status).toBe(201);
  expect(created.body.optOutKeywords).toEqual(['STOP', 'UNSUBSCRIBE']);
  const id = created.body.id;
  expect((await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { optOutKeywords: [' Стоп ', 'STOP'] })).body.optOutKeywords).toEqual(['Стоп', 'STOP']);
  expect((await call(api, 'GET', `/v1/accounts/${id}`, a.token)).body.optOutKeywords).toEqual(['Стоп', 'STOP']);
  expect((await call(api, 'PATCH', `/v1/accounts/${id}`, a.token, { optOutKeywords: [] })).body.optOutKeywords).toEqual([]);
  const given = await call(api, 'POST', '/v1/accounts', a.token, { platform: 'telegram_user', name: 'Me 2', optOutKeywords: ['ALTO'] });
  expect(given.body.optOutKeywords).toEqual(['ALTO']);
  const defaults = (await call(api, 'GET', '/v1/account-defaults', a.token)).body.items as { platform: string; optOutKeywords: string[] }[];
  expect(defaults.find((d) => d.platform === 'telegram_user')?.optOutKeywords).toEqual(['STOP', 'UNSUBSCRIBE']);
});
