import { apiForFile, call, createCampaign, fields, NOW, seedRun, tenantForFile } from './harness.js';

// chatCap, a per-chat cap across campaigns (CONTRACT §3, accounts): set, changed and read like
// the other limits, and a chat it holds waits with reason chat_cap (its target's hold and the run's).

const api = apiForFile('api_accounts_chat_cap');
const t = tenantForFile(api, 'chat-cap');
beforeEach(() => api.clock.set(NOW));
let n = 0;
const httpAccount = (extra: Record<string, unknown> = {}) =>
  call(api, 'POST', '/v1/accounts', t.token, {
    platform: 'http',
    credentials: { apiKey: 'sandbox-api-key-0001' },
    name: 'Shop',
    externalId: `cap-${++n}`,
    ...extra,
  });

test('chatCap: none by default; set on create, changed and turned off by PATCH, read back by GET', async () => {
  expect((await httpAccount()).body.chatCap).toBeNull();
  const created = await httpAccount({ chatCap: { count: 2, per: 'day' } });
  expect(created.status).toBe(201);
  expect(created.body.chatCap).toEqual({ count: 2, per: 'day' });
  const id = created.body.id;
  // a PATCH of other settings leaves it
  expect((await call(api, 'PATCH', `/v1/accounts/${id}`, t.token, { hourlyCap: 10 })).body.chatCap).toEqual({ count: 2, per: 'day' });
  expect((await call(api, 'PATCH', `/v1/accounts/${id}`, t.token, { chatCap: { count: 5, per: 'week' } })).body.chatCap).toEqual({ count: 5, per: 'week' });
  expect((await call(api, 'GET', `/v1/accounts/${id}`, t.token)).body.chatCap).toEqual({ count: 5, per: 'week' });
  expect((await call(api, 'PATCH', `/v1/accounts/${id}`, t.token, { chatCap: null })).body.chatCap).toBeNull();
  expect((await call(api, 'GET', `/v1/accounts/${id}`, t.token)).body.chatCap).toBeNull();
  // the console draws its inputs from the description
  const defaults = (await call(api, 'GET', '/v1/account-defaults', t.token)).body.items[0];
  expect(defaults.limitSettings).toEqual([
    expect.objectContaining({
      field: 'chatCap',
      parts: [expect.objectContaining({ name: 'count', kind: 'int' }), expect.objectContaining({ name: 'per', values: ['day', 'week'] })],
    }),
  ]);
});

test.each([
  [{ chatCap: { count: 0, per: 'day' } }, 'chatCap.count'],
  [{ chatCap: { count: 2, per: 'month' } }, 'chatCap.per'],
  [{ chatCap: { count: 2 } }, 'chatCap.per'],
  [{ chatCap: { count: 2, per: 'day', extra: 1 } }, 'chatCap.extra'],
])('%j → 400 naming %s', async (body, field) => {
  const created = await httpAccount(body);
  expect(created.status).toBe(400);
  expect(fields(created)).toEqual([field]);
  const id = (await httpAccount()).body.id;
  const patched = await call(api, 'PATCH', `/v1/accounts/${id}`, t.token, body);
  expect(patched.status).toBe(400);
  expect(fields(patched)).toEqual([field]);
});

test('a chat held by the cap waits with reason chat_cap, until its oldest message leaves the window', async () => {
  const campaign = await createCampaign(api, t);
  const run = await seedRun(api, campaign.id, 'running', { a: 'pending', b: 'pending', c: 'pending' }, { scheduledAt: new Date(NOW - 60_000) });
  await api.db
    .updateTable('runs')
    .set({ window_end_at: new Date(NOW + 86_400_000) })
    .where('id', '=', run.id)
    .execute();
  // as the gate puts them back (libs/core holdCode('chat_cap')), no attempt counted
  await api.db
    .updateTable('run_targets')
    .set({ next_attempt_at: new Date(NOW + 3_600_000), error_code: 'chat_cap' })
    .where('run_id', '=', run.id)
    .where('chat_id', 'in', ['a', 'b'])
    .execute();
  await api.db.updateTable('run_targets').set({ status: 'sent' }).where('run_id', '=', run.id).where('chat_id', '=', 'c').execute();
  const body = (await call(api, 'GET', `/v1/runs/${run.id}`, t.token)).body;
  expect(body.waiting).toEqual({
    reason: 'chat_cap',
    until: new Date(NOW + 3_600_000).toISOString(),
    detail: "2 chats held until 12:00 by the account's cap on messages to one chat (chatCap), whichever campaign sends.",
  });
  const targets = (await call(api, 'GET', `/v1/runs/${run.id}/targets`, t.token)).body.items as { chatId: string; waiting: unknown }[];
  expect(targets.find((x) => x.chatId === 'a')!.waiting).toMatchObject({ reason: 'chat_cap', until: new Date(NOW + 3_600_000).toISOString() });
});
