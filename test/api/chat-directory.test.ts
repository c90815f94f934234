import { Queue } from 'bullmq';
import { ChatDirectoryRepository } from '@metronome/db';
import { DIRECTORY_QUEUE, directoryJobId } from '@metronome/queue';
import { redisKeys } from '@metronome/redis';
import { call, createTenant, fields, startApi, type Api, type Tenant } from './harness.js';

// An account's chat directory through the API (CONTRACT §3, "Chat directory"): list, search and
// filter what the senders synced, ask for a sync, and see where it stands on the account.

const KEY = { apiKey: 'sandbox-api-key-0001' };

let api: Api;
let a: Tenant;
let b: Tenant;
let jobs: Queue;
let n = 0;
beforeAll(async () => {
  api = await startApi('api_directory');
  a = await createTenant(api, 'A');
  b = await createTenant(api, 'B');
  jobs = new Queue(DIRECTORY_QUEUE, { connection: api.redis, prefix: redisKeys(api.prefix).queuePrefix });
}, 30_000);
afterAll(async () => {
  await jobs.close();
  await api.close();
});

const create = async (tenant: Tenant, platform: 'http' | 'telegram' = 'http') => {
  const body =
    platform === 'http'
      ? { platform, credentials: KEY, name: 'x', externalId: `dir-${++n}` }
      : { platform, credentials: { botToken: `12345${++n}:AAE-abcdefghijklmnopqrstuvwxyz0123456` }, name: 'x' };
  const res = await call(api, 'POST', '/v1/accounts', tenant.token, body);
  expect(res.status).toBe(201);
  return res.body as { id: string; directory: Record<string, unknown> };
};
const T = new Date('2030-01-16T02:00:00.000Z');
const chats = [
  { chatId: 'g-1', title: 'Café Lumière Regulars', kind: 'group' as const, memberCount: 40, canSend: true, cannotSendReason: null },
  { chatId: 'g-2', title: 'Riverside Book Club', kind: 'group' as const, memberCount: 12, canSend: false, cannotSendReason: 'announce_only' as const },
  { chatId: 'd-1', title: 'José Álvarez', kind: 'direct' as const, memberCount: 2, canSend: true, cannotSendReason: null },
  { chatId: 'g-3', title: 'CAFE owners', kind: 'group' as const, memberCount: null, canSend: true, cannotSendReason: null },
];

test('the directory lists in title order, searches title or id with case and accents folded, filters, and pages', async () => {
  const { id } = await create(a);
  await new ChatDirectoryRepository(api.db).replaceAll(id, chats, T);
  const list = async (q = '') =>
    (await call(api, 'GET', `/v1/accounts/${id}/chats${q}`, a.token)).body as { items: { chatId: string }[]; nextCursor: string | null };
  const all = await list();
  expect(all.items.map((c) => c.chatId)).toEqual(['g-1', 'g-3', 'd-1', 'g-2']);
  expect(all.items[3]).toEqual({
    chatId: 'g-2',
    title: 'Riverside Book Club',
    kind: 'group',
    memberCount: 12,
    canSend: false,
    cannotSendReason: 'announce_only',
    lastSyncAt: T.toISOString(),
  });
  expect((await list('?query=CAFÉ')).items.map((c) => c.chatId)).toEqual(['g-1', 'g-3']);
  expect((await list('?query=jose%20alv')).items.map((c) => c.chatId)).toEqual(['d-1']);
  expect((await list('?query=g-2')).items.map((c) => c.chatId)).toEqual(['g-2']);
  expect((await list('?kind=direct')).items.map((c) => c.chatId)).toEqual(['d-1']);
  expect((await list('?canSend=false')).items.map((c) => c.chatId)).toEqual(['g-2']);
  expect((await list('?canSend=true&kind=group')).items.map((c) => c.chatId)).toEqual(['g-1', 'g-3']);
  const first = await list('?limit=3');
  expect(first.items.map((c) => c.chatId)).toEqual(['g-1', 'g-3', 'd-1']);
  expect(await list(`?limit=3&cursor=${first.nextCursor}`)).toEqual({ items: [expect.objectContaining({ chatId: 'g-2' })], nextCursor: null });
});

test.each([
  ['?kind=room', 'kind'],
  ['?canSend=yes', 'canSend'],
  ['?limit=0', 'limit'],
  ['?cursor=not-a-cursor', 'cursor'],
  [`?query=${'x'.repeat(201)}`, 'query'],
])('a bad query %s is a 400 naming %s', async (q, field) => {
  const { id } = await create(a);
  const res = await call(api, 'GET', `/v1/accounts/${id}/chats${q}`, a.token);
  expect(res.status).toBe(400);
  expect(fields(res)).toEqual([field]);
});

test("another tenant's account is not found, for listing and syncing alike", async () => {
  const { id } = await create(a);
  await new ChatDirectoryRepository(api.db).replaceAll(id, chats, T);
  expect((await call(api, 'GET', `/v1/accounts/${id}/chats`, b.token)).status).toBe(404);
  expect((await call(api, 'POST', `/v1/accounts/${id}/chats/sync`, b.token)).status).toBe(404);
  expect((await call(api, 'GET', '/v1/accounts/00000000-0000-4000-8000-000000000000/chats', a.token)).status).toBe(404);
  expect((await call(api, 'GET', `/v1/accounts/${id}/chats`, a.token)).body.items).toHaveLength(4);
});

test('an http account asks for a sync when created and when given a new API key; a sync asked for is 202 syncing and one job per account', async () => {
  const created = await create(a);
  expect(created.directory).toEqual({ status: 'syncing', synced: 0, size: 0, lastSyncAt: null, until: null, reason: null });
  expect(await jobs.getJob(directoryJobId(created.id))).toBeTruthy();

  // a new API key asks again
  await jobs.remove(directoryJobId(created.id));
  const rekeyed = await call(api, 'PATCH', `/v1/accounts/${created.id}`, a.token, { credentials: { apiKey: 'sandbox-api-key-0002' } });
  expect(rekeyed.body.directory.status).toBe('syncing');
  expect(await jobs.getJob(directoryJobId(created.id))).toBeTruthy();
  await jobs.remove(directoryJobId(created.id));
  expect((await call(api, 'PATCH', `/v1/accounts/${created.id}`, a.token, { name: 'renamed' })).status).toBe(200);
  expect(await jobs.getJob(directoryJobId(created.id))).toBeUndefined();

  const telegram = await create(a, 'telegram');
  expect(telegram.directory).toEqual({ status: 'never', synced: 0, size: 0, lastSyncAt: null, until: null, reason: null });
  expect(await jobs.getJob(directoryJobId(telegram.id))).toBeUndefined();
  const sync = await call(api, 'POST', `/v1/accounts/${telegram.id}/chats/sync`, a.token);
  expect(sync.status).toBe(202);
  expect(sync.body).toEqual({ status: 'syncing', synced: 0, size: 0, lastSyncAt: null, until: null, reason: null });
  expect(await call(api, 'POST', `/v1/accounts/${telegram.id}/chats/sync`, a.token)).toMatchObject({ status: 202 });
  expect((await jobs.getJobs(['waiting', 'delayed'])).filter((j) => j.data.accountId === telegram.id)).toHaveLength(1);

  // what the senders report shows on the account
  const repo = new ChatDirectoryRepository(api.db);
  await repo.replaceAll(telegram.id, chats, T);
  await repo.syncState(telegram.id, { status: 'ok', size: 4 }, T);
  const account = await call(api, 'GET', `/v1/accounts/${telegram.id}`, a.token);
  expect(account.body.directory).toEqual({ status: 'ok', synced: 4, size: 4, lastSyncAt: T.toISOString(), until: null, reason: null });
  const listed = (await call(api, 'GET', '/v1/accounts?limit=100', a.token)).body.items.find((x: { id: string }) => x.id === telegram.id);
  expect(listed.directory.status).toBe('ok');
});
