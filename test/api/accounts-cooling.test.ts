import { apiForFile, call, createCampaign, NOW, seedRun, type Tenant, tenantForFile } from './harness.js';

// Automatic cooling through the API: the account shows its cooling and the pace in force, an
// operator lifts it (POST …/cooling/lift, or PATCH status active), a run of a cooling account
// explains that it waits (waiting.reason "cooling"), and another tenant's account is a 404.

const MIN = 60_000;
const api = apiForFile('api_accounts_cooling');
const a = tenantForFile(api, 'A');
const b = tenantForFile(api, 'B');

/** An account of `tenant` (40/min) that cooled a minute ago for 30 minutes, its pace halved, recovering from the end. */
async function coolingAccount(tenant: Tenant): Promise<{ accountId: string; campaignId: string; until: Date }> {
  const { id: campaignId, accountId } = await createCampaign(api, tenant);
  const now = api.clock.now();
  const until = new Date(now + 29 * MIN);
  await api.db
    .updateTable('accounts')
    .set({ status: 'cooling', cooling_since: new Date(now - MIN), cooling_until: until, cooling_reason: 'flood_waits', pace_factor: 0.5, pace_since: until })
    .where('id', '=', accountId)
    .execute();
  return { accountId, campaignId, until };
}

test('a cooling account shows why, since and until when, and its lowered pace', async () => {
  const { accountId, until } = await coolingAccount(a);
  const res = await call(api, 'GET', `/v1/accounts/${accountId}`, a.token);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    status: 'cooling',
    maxSendPerMinute: 40,
    effectiveMaxSendPerMinute: 20,
    cooling: { since: new Date(api.clock.now() - MIN).toISOString(), until: until.toISOString(), reason: 'flood_waits' },
  });
  // the list shows the same
  const list = await call(api, 'GET', '/v1/accounts', a.token);
  expect(list.body.items.find((x: { id: string }) => x.id === accountId)).toMatchObject({ status: 'cooling', effectiveMaxSendPerMinute: 20 });
});

test('a run of a cooling account waits with reason cooling until the cooling ends', async () => {
  const { campaignId, until } = await coolingAccount(a);
  const run = await seedRun(api, campaignId, 'running', { 'chat-1': 'pending', 'chat-2': 'pending' }, { scheduledAt: new Date(NOW - MIN) });
  const res = await call(api, 'GET', `/v1/runs/${run.id}`, a.token);
  expect(res.body.waiting).toMatchObject({ reason: 'cooling', until: until.toISOString() });
  expect(res.body.waiting.detail).toMatch(/^The account is cooling until \d\d:\d\d \(.+\) after the platform made it wait too often; 2 chats to send/);
  const targets = await call(api, 'GET', `/v1/runs/${run.id}/targets`, a.token);
  expect(targets.body.items.map((t: { waiting: { reason: string } }) => t.waiting.reason)).toEqual(['cooling', 'cooling']);
});

test('POST …/cooling/lift ends the cooling now: active, the lowered pace recovering from now; 409 when not cooling', async () => {
  const { accountId } = await coolingAccount(a);
  const lifted = await call(api, 'POST', `/v1/accounts/${accountId}/cooling/lift`, a.token);
  expect(lifted.status).toBe(200);
  expect(lifted.body).toMatchObject({ status: 'active', cooling: null, effectiveMaxSendPerMinute: 20 });
  // recovery counts from the lift: +10 % of 40/min per clean 10 minutes
  api.clock.advance(10 * MIN);
  expect((await call(api, 'GET', `/v1/accounts/${accountId}`, a.token)).body.effectiveMaxSendPerMinute).toBe(24);
  api.clock.advance(40 * MIN);
  expect((await call(api, 'GET', `/v1/accounts/${accountId}`, a.token)).body.effectiveMaxSendPerMinute).toBe(40);
  const again = await call(api, 'POST', `/v1/accounts/${accountId}/cooling/lift`, a.token);
  expect(again.status).toBe(409);
  expect(again.body.error.code).toBe('conflict');
});

test('PATCH status active on a cooling account lifts it the same way', async () => {
  const { accountId } = await coolingAccount(a);
  const res = await call(api, 'PATCH', `/v1/accounts/${accountId}`, a.token, { status: 'active' });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ status: 'active', cooling: null });
  const row = await api.db.selectFrom('accounts').select(['cooling_until', 'pace_since']).where('id', '=', accountId).executeTakeFirstOrThrow();
  expect(row.cooling_until).toBeNull();
  expect(row.pace_since?.getTime()).toBe(api.clock.now());
});

test("another tenant's cooling account is a 404, exactly as a missing one, and stays cooling", async () => {
  const { accountId } = await coolingAccount(b);
  const res = await call(api, 'POST', `/v1/accounts/${accountId}/cooling/lift`, a.token);
  const missing = await call(api, 'POST', '/v1/accounts/6b1c4c55-3f2e-4d0b-9a55-2a4d8e0f9c11/cooling/lift', a.token);
  expect(res.status).toBe(404);
  expect(res.body).toEqual(missing.body);
  expect((await call(api, 'PATCH', `/v1/accounts/${accountId}`, a.token, { status: 'active' })).status).toBe(404);
  expect((await call(api, 'GET', `/v1/accounts/${accountId}`, b.token)).body.status).toBe('cooling');
});

test('metronome_accounts counts cooling accounts', async () => {
  const res = await api.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.body).toMatch(/metronome_accounts\{platform="http",status="cooling"[^}]*\} [1-9]/);
  expect(res.body).toMatch(/metronome_accounts\{platform="telegram",status="cooling"[^}]*\} 0/);
});

test('a restriction says which one and what to do, on the account and on its waiting runs; a lift forgets it', async () => {
  const { id: campaignId, accountId } = await createCampaign(api, a);
  // as the sender leaves a telegram_user account Telegram answered USER_BANNED_IN_CHANNEL
  await api.db
    .updateTable('accounts')
    .set({
      platform: 'telegram_user',
      status: 'cooling',
      cooling_since: new Date(api.clock.now()),
      cooling_reason: 'restricted',
      restricted_because: 'account_spam_limited',
    })
    .where('id', '=', accountId)
    .execute();
  const shown = (await call(api, 'GET', `/v1/accounts/${accountId}`, a.token)).body;
  expect(shown.cooling).toMatchObject({ reason: 'restricted', until: null, restrictedBecause: 'account_spam_limited' });
  expect(shown.cooling.advice).toMatch(
    /^Telegram limited the account for spam in groups and channels \(USER_BANNED_IN_CHANNEL\): ask @SpamBot.*then resume\.$/,
  );
  const run = await seedRun(api, campaignId, 'running', { 'chat-1': 'pending' }, { scheduledAt: new Date(NOW - MIN) });
  const waiting = (await call(api, 'GET', `/v1/runs/${run.id}`, a.token)).body.waiting;
  expect(waiting).toMatchObject({ reason: 'cooling', until: null });
  expect(waiting.detail).toMatch(
    /^Telegram limited the account for spam in groups and channels \(USER_BANNED_IN_CHANNEL\).*1 chat to send, and the run waits until an operator lifts the restriction\.$/,
  );
  expect((await call(api, 'POST', `/v1/accounts/${accountId}/cooling/lift`, a.token)).body).toMatchObject({ status: 'active', cooling: null });
  const row = await api.db.selectFrom('accounts').select('restricted_because').where('id', '=', accountId).executeTakeFirstOrThrow();
  expect(row.restricted_because).toBeNull();
});
