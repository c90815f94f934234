import { api, sandbox, type SandboxMessage, sharedStackForFile } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';

// Tenant C cannot deliver anything as tenant A's http account, judged at the platform (the
// sandbox, a real process): not by registering A's externalId, not by moving an account onto it,
// not with A's account id; and even an account that names A's platform account (as a duplicate
// from before the uniqueness rule could) is refused by the platform, because it lacks A's key.

const stack = sharedStackForFile({ prism: true });

const SHARED = 'shared-platform-account';

async function runOnce(token: string, accountId: string, targets: string[]): Promise<{ status: string; pausedReason: string | null }> {
  const campaign = await api(stack, 'POST', '/v1/campaigns', token, {
    accountId,
    name: 'c',
    timezone: 'UTC',
    schedule: { type: 'once', at: new Date().toISOString() },
    messages: [{ type: 'text', text: `from ${accountId}` }],
    targets,
    active: false,
  });
  expect(campaign.status).toBe(201);
  const run = await api(stack, 'POST', `/v1/campaigns/${campaign.body.id}/runs`, token);
  expect(run.status).toBe(201);
  return eventually(
    'the run to stop',
    async () => {
      const r = (await api(stack, 'GET', `/v1/runs/${run.body.id}`, token)).body;
      return ['queued', 'running'].includes(r.status) ? null : r;
    },
    20_000,
    200,
  );
}

test("tenant C cannot deliver as tenant A's http account, by any route or field", async () => {
  const a = (await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name: 'A' })).body;
  const c = (await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name: 'C' })).body;
  const accountA = await api(stack, 'POST', '/v1/accounts', a.token, {
    platform: 'http',
    name: 'A',
    externalId: SHARED,
    credentials: { apiKey: 'tenant-a-api-key-000000001' },
    maxSendPerMinute: 6000,
  });
  expect(accountA.status).toBe(201);
  expect((await runOnce(a.token, accountA.body.id, ['a-chat'])).status).toBe('success');
  const delivered = async () => ((await sandbox(stack, `/sandbox/messages?account=${SHARED}`)).items as SandboxMessage[]).map((m) => m.chatId);
  expect(await delivered()).toEqual(['a-chat']);

  // registering A's externalId: the very answer a malformed id gets
  const cKey = { apiKey: 'tenant-c-api-key-000000001' };
  const malformed = await api(stack, 'POST', '/v1/accounts', c.token, { platform: 'http', name: 'C', externalId: `${SHARED}/x`, credentials: cKey });
  const taken = await api(stack, 'POST', '/v1/accounts', c.token, { platform: 'http', name: 'C', externalId: SHARED, credentials: cKey });
  expect(malformed.status).toBe(400);
  expect(taken).toEqual(malformed);
  // moving an account of C onto it
  const accountC = await api(stack, 'POST', '/v1/accounts', c.token, {
    platform: 'http',
    name: 'C',
    externalId: 'tenant-c-own',
    credentials: cKey,
    maxSendPerMinute: 6000,
  });
  expect(accountC.status).toBe(201);
  const moved = await api(stack, 'PATCH', `/v1/accounts/${accountC.body.id}`, c.token, { externalId: SHARED });
  expect(moved.status).toBe(400);
  expect(moved.body.error.details.map((d: { field: string }) => d.field)).toEqual(['externalId']);
  // naming A's account
  expect(
    (
      await api(stack, 'POST', '/v1/campaigns', c.token, {
        accountId: accountA.body.id,
        name: 'x',
        timezone: 'UTC',
        schedule: { type: 'once', at: new Date().toISOString() },
        messages: [{ type: 'text', text: 'x' }],
        targets: ['x'],
      })
    ).status,
  ).not.toBe(201);
  expect((await api(stack, 'PATCH', `/v1/accounts/${accountA.body.id}`, c.token, { credentials: cKey })).status).toBe(404);

  // Below the API: C's account made to name A's platform account in the database, as a
  // duplicate from before migration 0005 would (A's row moved aside so the index allows it).
  await stack.db.db
    .updateTable('accounts')
    .set({ external_id: `${SHARED}~moved` })
    .where('id', '=', accountA.body.id)
    .execute();
  await stack.db.db.updateTable('accounts').set({ external_id: SHARED }).where('id', '=', accountC.body.id).execute();
  const run = await runOnce(c.token, accountC.body.id, ['c-chat-1', 'c-chat-2']);
  // the platform refused C's key: C's account is disconnected and its run paused, nothing lost
  expect(run).toMatchObject({ status: 'paused', pausedReason: 'account_unavailable' });
  expect((await api(stack, 'GET', `/v1/accounts/${accountC.body.id}`, c.token)).body.status).toBe('disconnected');
  expect(await delivered()).toEqual(['a-chat']);
  const refused = (await sandbox(stack, `/sandbox/rejections?account=${SHARED}`)).items as { reason: string; error: string; chatId: string }[];
  expect(refused.length).toBeGreaterThan(0);
  expect(refused.every((r) => r.reason === 'unauthorized' && r.error === 'unauthorized' && r.chatId.startsWith('c-chat'))).toBe(true);
}, 60_000);
