import { createHash } from 'node:crypto';
import { RunRepository, WhatsAppAuthRepository } from '@metronome/db';
import { redisKeys } from '@metronome/redis';
import type { WhatsAppSocketPool } from '@metronome/transports/whatsapp';
import { sql } from 'kysely';
import { whatsappLogout } from '../../services/control-api/src/routes/erasure.js';
import { FakeWhatsAppNetwork } from '../helpers/fake-whatsapp-socket.js';
import { seedAccount, seedCampaign } from '../helpers/seed.js';
import { makePool, seedPairedAuth, socketLeases } from '../platforms/whatsapp-setup.js';
import { ADMIN_TOKEN, call, createCampaign, createTenant, NOW, seedRun, startApi, type Api, type Tenant } from './harness.js';

// The deletes and the chat erase through the API (app.inject) on real PostgreSQL and Redis, with
// the real WhatsApp socket pool on a FAKE WhatsApp network: what is deleted answers no route
// afterwards, not even to the admin, and nothing of another tenant or account is touched.

const SECRETS_KEY = Buffer.alloc(32, 7);
let api: Api;
let network: FakeWhatsAppNetwork;
let pool: WhatsAppSocketPool;
let other: Tenant;
let otherCampaign: { id: string; accountId: string };
let otherRun: string;

beforeAll(async () => {
  api = await startApi('erasure', { secretsKey: SECRETS_KEY }, {}, undefined, (deps) => {
    network = new FakeWhatsAppNetwork(deps.clock);
    pool = makePool(network, socketLeases(deps.redis, deps.prefix), new WhatsAppAuthRepository(deps.db), [SECRETS_KEY], deps.clock);
    return { whatsappPairing: pool, accountLogout: whatsappLogout(pool) };
  });
  // a bystander: every test checks it is untouched
  other = await createTenant(api, 'bystander');
  otherCampaign = await createCampaign(api, other, { targets: ['chat-x', 'chat-2'] });
  otherRun = (await seedRun(api, otherCampaign.id, 'success', { 'chat-x': 'sent', 'chat-2': 'sent' })).id;
}, 30_000);

afterAll(async () => {
  await pool?.close();
  await api?.close();
});

/** The bystander tenant's account, campaign, run and targets all still answer. */
async function bystanderIntact(): Promise<void> {
  expect((await call(api, 'GET', `/v1/accounts/${otherCampaign.accountId}`, other.token)).status).toBe(200);
  expect((await call(api, 'GET', `/v1/campaigns/${otherCampaign.id}`, other.token)).body.targets).toEqual(['chat-x', 'chat-2']);
  const targets = await call(api, 'GET', `/v1/runs/${otherRun}/targets`, other.token);
  expect(targets.body.items.map((t: { chatId: string }) => t.chatId).sort()).toEqual(['chat-2', 'chat-x']);
}

test('DELETE /v1/accounts/{id} logs the WhatsApp session out, wipes its auth, cancels its open runs and keeps its history', async () => {
  const tenant = await createTenant(api, 'wa');
  const accountId = await seedAccount(api.db, tenant.id, { platform: 'whatsapp', name: 'wa', external_id: null });
  await seedPairedAuth(new WhatsAppAuthRepository(api.db), accountId, [SECRETS_KEY], api.clock);
  const campaignId = await seedCampaign(api.db, { tenantId: tenant.id, accountId });
  const open = await seedRun(api, campaignId, 'paused', { a: 'pending', b: 'sent' });
  const done = await seedRun(api, campaignId, 'success', { a: 'sent', b: 'sent' });
  const keep = await createCampaign(api, tenant);

  const res = await call(api, 'DELETE', `/v1/accounts/${accountId}`, tenant.token);
  expect(res.status).toBe(204);
  // the FAKE socket recorded the logout: WhatsApp forgets the linked device
  expect(network.loggedOut.has(accountId)).toBe(true);
  expect(await api.db.selectFrom('whatsapp_auth').select('key_id').where('account_id', '=', accountId).execute()).toEqual([]);
  expect(await api.redis.get(redisKeys(api.prefix).socketLease(accountId))).toBeNull();
  for (const token of [tenant.token, ADMIN_TOKEN]) {
    expect((await call(api, 'GET', `/v1/accounts/${accountId}`, token)).status).toBe(404);
    expect((await call(api, 'GET', `/v1/accounts/${accountId}/chats`, token)).status).toBe(404);
    expect((await call(api, 'PATCH', `/v1/accounts/${accountId}`, token, { name: 'x' })).status).toBe(404);
    expect((await call(api, 'GET', '/v1/accounts?limit=100', token)).body.items.map((a: { id: string }) => a.id)).not.toContain(accountId);
    expect((await call(api, 'GET', `/v1/campaigns/${campaignId}`, token)).status).toBe(404);
  }
  expect((await call(api, 'DELETE', `/v1/accounts/${accountId}`, tenant.token)).status).toBe(404);
  // history stays (under retention): the open run cancelled, the finished one as it was
  expect((await call(api, 'GET', `/v1/runs/${open.id}`, tenant.token)).body.status).toBe('cancelled');
  const kept = await call(api, 'GET', `/v1/runs/${done.id}`, tenant.token);
  expect(kept.body.status).toBe('success');
  expect(kept.body.counts.sent).toBe(2);
  // the tenant's other account and campaign untouched
  expect((await call(api, 'GET', `/v1/campaigns/${keep.id}`, tenant.token)).status).toBe(200);
  await bystanderIntact();
});

test('DELETE /v1/accounts/{id}?purge=true takes its runs, targets and events too', async () => {
  const tenant = await createTenant(api, 'purge');
  const campaign = await createCampaign(api, tenant);
  const run = await seedRun(api, campaign.id, 'partial', { a: 'sent', b: 'failed' });
  const neighbour = await createCampaign(api, tenant);
  const neighbourRun = await seedRun(api, neighbour.id, 'success', { a: 'sent' });

  expect((await call(api, 'DELETE', `/v1/accounts/${campaign.accountId}?purge=maybe`, tenant.token)).status).toBe(400);
  expect((await call(api, 'DELETE', `/v1/accounts/${campaign.accountId}?purge=true`, tenant.token)).status).toBe(204);
  for (const token of [tenant.token, ADMIN_TOKEN]) {
    expect((await call(api, 'GET', `/v1/runs/${run.id}`, token)).status).toBe(404);
    expect((await call(api, 'GET', `/v1/runs/${run.id}/targets`, token)).status).toBe(404);
    expect((await call(api, 'GET', `/v1/accounts/${campaign.accountId}`, token)).status).toBe(404);
  }
  const rows = await sql<{
    n: number;
  }>`select (select count(*) from run_targets where run_id = ${run.id})::int + (select count(*) from run_events where run_id = ${run.id})::int
    + (select count(*) from accounts where id = ${campaign.accountId})::int as n`.execute(api.db);
  expect(rows.rows[0]!.n).toBe(0);
  expect((await call(api, 'GET', `/v1/runs/${neighbourRun.id}`, tenant.token)).body.counts.sent).toBe(1);
  await bystanderIntact();
});

test('DELETE /v1/media/{id} answers 409 naming the campaigns that use it, then deletes it', async () => {
  const tenant = await createTenant(api, 'media');
  const upload = async () => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/v1/media',
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'image/png' },
      payload: Buffer.from('png bytes'),
    });
    return JSON.parse(res.body).id as string;
  };
  const [used, spare] = [await upload(), await upload()];
  const campaign = await createCampaign(api, tenant, { name: 'With picture', messages: [{ type: 'media', mediaId: used, caption: 'hi' }] });

  const refused = await call(api, 'DELETE', `/v1/media/${used}`, tenant.token);
  expect(refused.status).toBe(409);
  expect(refused.body.error.details).toEqual([{ field: `campaigns.${campaign.id}`, message: 'campaign "With picture" sends this media' }]);
  expect((await call(api, 'GET', `/v1/media/${used}`, tenant.token)).status).toBe(200);
  expect((await call(api, 'DELETE', `/v1/media/${used}`, other.token)).status).toBe(404);

  expect((await call(api, 'DELETE', `/v1/campaigns/${campaign.id}`, tenant.token)).status).toBe(204);
  expect((await call(api, 'DELETE', `/v1/media/${used}`, tenant.token)).status).toBe(204);
  for (const token of [tenant.token, ADMIN_TOKEN]) {
    expect((await call(api, 'GET', `/v1/media/${used}`, token)).status).toBe(404);
    expect((await call(api, 'GET', '/v1/media?limit=100', token)).body.items.map((m: { id: string }) => m.id)).not.toContain(used);
  }
  expect((await call(api, 'GET', `/v1/media/${spare}`, tenant.token)).status).toBe(200);
  await bystanderIntact();
});

test('POST /v1/chats/erase removes the chat from the tenant and keeps only its salted hash, which stops a later run', async () => {
  const tenant = await createTenant(api, 'erase');
  const campaign = await createCampaign(api, tenant, { targets: ['chat-x', 'chat-y'] });
  const run = await seedRun(api, campaign.id, 'success', { 'chat-x': 'sent', 'chat-y': 'sent' });
  const audience = await call(api, 'POST', '/v1/audiences', tenant.token, { name: 'club' });
  await call(api, 'POST', `/v1/audiences/${audience.body.id}/members`, tenant.token, { members: [{ chatId: 'chat-x' }, { chatId: 'chat-y' }] });
  await call(api, 'POST', `/v1/accounts/${campaign.accountId}/suppressions`, tenant.token, { chatIds: ['chat-x'] });
  await api.db
    .insertInto('chat_directory')
    .values({
      account_id: campaign.accountId,
      chat_id: 'chat-x',
      title: 'X',
      title_folded: 'x\u001fchat-x',
      kind: 'direct',
      member_count: null,
      can_send: true,
      cannot_send_reason: null,
      last_sync_at: new Date(NOW),
      updated_at: new Date(NOW),
    })
    .execute();

  expect(fieldsOf(await call(api, 'POST', '/v1/chats/erase', tenant.token, {}))).toEqual(['chatId']);
  expect(fieldsOf(await call(api, 'POST', '/v1/chats/erase', ADMIN_TOKEN, { chatId: 'chat-x' }))).toEqual(['tenantId']);
  const erased = await call(api, 'POST', '/v1/chats/erase', tenant.token, { chatId: 'chat-x' });
  expect(erased.status).toBe(200);
  expect(erased.body).toEqual({ campaigns: 1, audienceMembers: 1, targets: 1, directory: 1 });

  for (const token of [tenant.token, ADMIN_TOKEN]) {
    expect((await call(api, 'GET', `/v1/campaigns/${campaign.id}`, token)).body.targets).toEqual(['chat-y']);
    expect((await call(api, 'GET', `/v1/audiences/${audience.body.id}/members`, token)).body.items.map((m: { chatId: string }) => m.chatId)).toEqual([
      'chat-y',
    ]);
    expect((await call(api, 'GET', `/v1/runs/${run.id}/targets`, token)).body.items.map((t: { chatId: string }) => t.chatId)).toEqual(['chat-y']);
    expect((await call(api, 'GET', `/v1/accounts/${campaign.accountId}/suppressions`, token)).body.items).toEqual([]);
    expect((await call(api, 'GET', `/v1/accounts/${campaign.accountId}/chats`, token)).body.items ?? []).toEqual([]);
  }
  // no row of the tenant holds the chat id; the suppression list holds its salted hash only
  const found = await sql<{ n: number }>`
    select count(*)::int as n from (
      select 1 from campaigns where tenant_id = ${tenant.id} and (targets::text like '%chat-x%' or target_vars::text like '%chat-x%')
      union all select 1 from run_targets t join runs r on r.id = t.run_id where r.tenant_id = ${tenant.id} and t.chat_id = 'chat-x'
      union all select 1 from audience_members m join audiences a on a.id = m.audience_id where a.tenant_id = ${tenant.id} and m.chat_id = 'chat-x'
      union all select 1 from account_suppressions where account_id = ${campaign.accountId} and chat_id = 'chat-x'
      union all select 1 from chat_directory where account_id = ${campaign.accountId} and chat_id = 'chat-x') x`.execute(api.db);
  expect(found.rows[0]!.n).toBe(0);
  const salt = (await api.db.selectFrom('tenants').select('chat_salt').where('id', '=', tenant.id).executeTakeFirstOrThrow()).chat_salt;
  const hash = createHash('sha256')
    .update(Buffer.concat([salt, Buffer.from('chat-x')]))
    .digest();
  expect(
    (await api.db.selectFrom('erased_chats').select('chat_hash').where('tenant_id', '=', tenant.id).execute()).map((r) => Buffer.from(r.chat_hash)),
  ).toEqual([hash]);
  await bystanderIntact();

  // the operator adds the chat back: the run's start (the sender's markRunning) skips it as suppressed
  expect((await call(api, 'PATCH', `/v1/campaigns/${campaign.id}`, tenant.token, { targets: ['chat-x', 'chat-y'] })).status).toBe(200);
  const again = await seedRun(api, campaign.id, 'queued', { 'chat-x': 'pending', 'chat-y': 'pending' });
  expect(await new RunRepository(api.db).markRunning(again.id, new Date(NOW))).toBe(true);
  const targets = await api.db
    .selectFrom('run_targets')
    .select(['chat_id', 'status', 'error_code'])
    .where('run_id', '=', again.id)
    .orderBy('chat_id')
    .execute();
  expect(targets).toEqual([
    { chat_id: 'chat-x', status: 'skipped', error_code: 'suppressed' },
    { chat_id: 'chat-y', status: 'pending', error_code: null },
  ]);
  // the bystander's chat of the same id is not erased: its own run starts it
  const theirs = await seedRun(api, otherCampaign.id, 'queued', { 'chat-x': 'pending' });
  await new RunRepository(api.db).markRunning(theirs.id, new Date(NOW));
  expect((await api.db.selectFrom('run_targets').select('status').where('run_id', '=', theirs.id).executeTakeFirstOrThrow()).status).toBe('pending');
  await api.db
    .updateTable('runs')
    .set({ status: 'cancelled', finished_at: new Date(NOW) })
    .where('id', 'in', [again.id, theirs.id])
    .execute();
});

test('DELETE /v1/tenants/{id} (admin only) kills its token at once and takes everything of it', async () => {
  const tenant = await createTenant(api, 'leaving');
  const campaign = await createCampaign(api, tenant);
  const run = await seedRun(api, campaign.id, 'success', { a: 'sent', b: 'sent' });
  const audience = await call(api, 'POST', '/v1/audiences', tenant.token, { name: 'gone' });
  await call(api, 'POST', `/v1/audiences/${audience.body.id}/members`, tenant.token, { members: [{ chatId: 'm-1' }] });
  expect((await call(api, 'GET', '/v1/me', tenant.token)).status).toBe(200); // the token is remembered now

  expect((await call(api, 'DELETE', `/v1/tenants/${tenant.id}`, tenant.token)).status).toBe(401);
  expect((await call(api, 'DELETE', `/v1/tenants/${tenant.id}`, ADMIN_TOKEN)).status).toBe(204);
  expect((await call(api, 'GET', '/v1/me', tenant.token)).status).toBe(401);
  expect((await call(api, 'DELETE', `/v1/tenants/${tenant.id}`, ADMIN_TOKEN)).status).toBe(404);
  for (const url of [`/v1/runs/${run.id}`, `/v1/campaigns/${campaign.id}`, `/v1/accounts/${campaign.accountId}`, `/v1/audiences/${audience.body.id}`]) {
    expect((await call(api, 'GET', url, ADMIN_TOKEN)).status).toBe(404);
  }
  expect((await call(api, 'GET', '/v1/tenants?limit=500', ADMIN_TOKEN)).body.items.map((t: { id: string }) => t.id)).not.toContain(tenant.id);
  expect((await call(api, 'GET', `/v1/export?tenantId=${tenant.id}`, ADMIN_TOKEN)).status).toBe(404);
  const left = await sql<{ n: number }>`
    select (select count(*) from tenants where id = ${tenant.id})::int + (select count(*) from runs where tenant_id = ${tenant.id})::int
         + (select count(*) from run_targets where run_id = ${run.id})::int + (select count(*) from accounts where tenant_id = ${tenant.id})::int
         + (select count(*) from audience_members where audience_id = ${audience.body.id})::int as n`.execute(api.db);
  expect(left.rows[0]!.n).toBe(0);
  await bystanderIntact();
});

test('GET /v1/export streams the tenant as NDJSON, never a secret', async () => {
  const res = await api.app.inject({ method: 'GET', url: '/v1/export', headers: { authorization: `Bearer ${other.token}` } });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
  const lines = res.body
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
  const types = new Set(lines.map((l) => l.type));
  for (const type of ['tenant', 'account', 'campaign', 'run', 'run_target']) expect(types).toContain(type);
  expect(lines.filter((l) => l.type === 'run_target' && l.data['run_id'] === otherRun)).toHaveLength(2);
  expect(res.body).not.toMatch(/credentials|token_hash|sandbox-api-key|chat_salt/);
  // another tenant's rows never appear
  expect(lines.filter((l) => l.type === 'tenant').map((l) => l.data['id'])).toEqual([other.id]);
  expect(fieldsOf(await call(api, 'GET', '/v1/export', ADMIN_TOKEN))).toEqual(['tenantId']);
});

function fieldsOf(answer: { body: any }): string[] {
  return (answer.body?.error?.details ?? []).map((d: { field: string }) => d.field);
}
