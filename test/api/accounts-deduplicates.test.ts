import { apiForFile, BOT, call, fields, SANDBOX_KEY as KEY, tenantForFile } from './harness.js';

// platformDeduplicates on accounts (CONTRACT §3, accounts, "Settling unknown"): http only,
// off unless said, shown on every account, changed by PATCH.

const api = apiForFile('api_accounts_dedup');
const a = tenantForFile(api, 'A');
let n = 0;

const post = (body: Record<string, unknown>) => call(api, 'POST', '/v1/accounts', a.token, { name: 'x', ...body });
const http = (extra: Record<string, unknown> = {}) => post({ platform: 'http', credentials: KEY, externalId: `dedup-${++n}`, ...extra });

test('off unless said; an http account takes it on POST and PATCH, and shows it', async () => {
  expect((await http()).body.platformDeduplicates).toBe(false);
  expect((await post({ platform: 'whatsapp' })).body.platformDeduplicates).toBe(false);
  const on = await http({ platformDeduplicates: true });
  expect(on.status).toBe(201);
  expect(on.body.platformDeduplicates).toBe(true);
  const off = await call(api, 'PATCH', `/v1/accounts/${on.body.id}`, a.token, { platformDeduplicates: false });
  expect(off.body.platformDeduplicates).toBe(false);
  expect((await call(api, 'PATCH', `/v1/accounts/${on.body.id}`, a.token, { platformDeduplicates: true })).body.platformDeduplicates).toBe(true);
  expect((await call(api, 'GET', `/v1/accounts/${on.body.id}`, a.token)).body.platformDeduplicates).toBe(true);
});

test('true on a telegram or whatsapp account is a 400 naming platformDeduplicates, on POST and PATCH; false is accepted', async () => {
  const refused = await post({ platform: 'telegram', credentials: BOT, platformDeduplicates: true });
  expect(refused.status).toBe(400);
  expect(fields(refused)).toEqual(['platformDeduplicates']);
  const wa = await post({ platform: 'whatsapp' });
  const patched = await call(api, 'PATCH', `/v1/accounts/${wa.body.id}`, a.token, { platformDeduplicates: true });
  expect(patched.status).toBe(400);
  expect(fields(patched)).toEqual(['platformDeduplicates']);
  expect((await call(api, 'PATCH', `/v1/accounts/${wa.body.id}`, a.token, { platformDeduplicates: false })).status).toBe(200);
  expect((await call(api, 'GET', `/v1/accounts/${wa.body.id}`, a.token)).body.platformDeduplicates).toBe(false);
});
