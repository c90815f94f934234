import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { ManualClock } from '@metronome/core';
import { WhatsAppAuthRepository } from '@metronome/db';
import { createLogger } from '@metronome/observability';
import type { RunQueue } from '@metronome/queue';
import { redisKeys, type SocketLeases } from '@metronome/redis';
import { isPaired, loadAuthState, type WhatsAppSocketPool } from '@metronome/transports/whatsapp';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { buildApp } from '../../services/control-api/src/app.js';
import { ADMIN_TOKEN, call, createTenant, fields, NOW, startApi, type Api, type Tenant } from '../api/harness.js';
import { FakeWhatsAppNetwork } from '../helpers/fake-whatsapp-socket.js';
import { openEventStream, type EventStream } from '../helpers/sse-client.js';
import { eventually, type TestDatabase } from '../helpers/test-env.js';
import { makePool, socketLeases } from './whatsapp-setup.js';

// Pairing a WhatsApp account through the control API (app.inject, plus a listening server for
// /v1/events), with the real socket pool, Redis lease and PostgreSQL auth state, and a FAKE
// WhatsApp network standing where WhatsApp's servers would be.

const SECRETS_KEY = randomBytes(32);
let database: TestDatabase;
let redis: Redis;
let prefix: string;
let leases: SocketLeases;
let network: FakeWhatsAppNetwork;
let pool: WhatsAppSocketPool;
let app: FastifyInstance;
let queue: RunQueue;
let api: Api;
let base: string;
let tenant: Tenant;
let auth: WhatsAppAuthRepository;
let clock: ManualClock;
const streams: EventStream[] = [];

beforeAll(async () => {
  api = await startApi('wa_pairing', { secretsKey: SECRETS_KEY }, {}, undefined, (deps) => {
    leases = socketLeases(deps.redis, deps.prefix);
    network = new FakeWhatsAppNetwork(deps.clock);
    auth = new WhatsAppAuthRepository(deps.db);
    pool = makePool(network, leases, auth, [SECRETS_KEY], deps.clock, { qrTtlMs: 60_000 });
    return { whatsappPairing: pool };
  });
  ({ app, database, redis, prefix, queue, clock } = api);
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  tenant = await createTenant(api, 'pairing');
}, 30_000);
afterAll(async () => {
  for (const s of streams) s.close();
  await pool.close();
  await api.close();
});

async function whatsappAccount(t: Tenant = tenant): Promise<string> {
  const res = await call(api, 'POST', '/v1/accounts', t.token, { platform: 'whatsapp', name: 'shop phone' });
  expect(res.status).toBe(201);
  expect(res.body.status).toBe('disconnected');
  return res.body.id;
}

const status = async (id: string) => (await call(api, 'GET', `/v1/accounts/${id}`, tenant.token)).body.status as string;

/** /v1/events as `token` sees it (the stream fills as events arrive). */
async function eventsAs(token: string): Promise<EventStream> {
  const stream = await openEventStream(base, token);
  streams.push(stream);
  return stream;
}

/** The `account` events a stream has received so far. */
const accountEvents = (stream: EventStream): { accountId: string; status: string }[] => stream.events.filter((e) => e.event === 'account').map((e) => e.data);

test('pairing by QR: the QR carries the new device keys; pairing → active once the phone accepts, with account events', async () => {
  const accountId = await whatsappAccount();
  const events = await eventsAs(tenant.token);
  const operatorEvents = await eventsAs(ADMIN_TOKEN);
  const outsider = await createTenant(api, 'outsider');
  const outsiderEvents = await eventsAs(outsider.token);
  const res = await call(api, 'POST', `/v1/accounts/${accountId}/pair`, tenant.token, {});
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ status: 'pairing', qr: expect.any(String), expiresAt: new Date(NOW + 60_000).toISOString() });
  expect(await status(accountId)).toBe('pairing');

  // The QR is built from the credentials now stored (sealed) for the account.
  const stored = await loadAuthState(auth, accountId, [SECRETS_KEY], clock);
  expect(isPaired(stored.state.creds)).toBe(false);
  expect(res.body.qr).toContain(Buffer.from(stored.state.creds.noiseKey.public).toString('base64'));
  expect(res.body.qr).toContain(stored.state.creds.advSecretKey);
  // the pairing socket holds the account's socket lease
  expect(await redis.get(redisKeys(prefix).socketLease(accountId))).not.toBeNull();

  network.completePairing(accountId, '60123450001');
  await eventually('the account is active', async () => (await status(accountId)) === 'active', 10_000, 20);
  const paired = await loadAuthState(auth, accountId, [SECRETS_KEY], clock);
  expect(isPaired(paired.state.creds)).toBe(true);
  expect(paired.state.creds.me?.id).toBe('60123450001:7@s.whatsapp.net');
  // After pair-success WhatsApp asked for a restart: the device connected again, then the API let go.
  expect(network.sockets.filter((s) => s.accountId === accountId)).toHaveLength(2);
  await eventually(
    'the pairing socket is closed and its lease released',
    async () => !network.openSocket(accountId) && (await redis.get(redisKeys(prefix).socketLease(accountId))) === null,
    5_000,
    20,
  );
  await eventually('both account events arrived', async () => accountEvents(events).length >= 2, 5_000, 20);
  expect(accountEvents(events).filter((e) => e.accountId === accountId)).toEqual([
    { accountId, status: 'pairing' },
    { accountId, status: 'active' },
  ]);
  // the operator sees every tenant's accounts; another tenant sees none of them
  await eventually('the operator got both events', async () => accountEvents(operatorEvents).filter((e) => e.accountId === accountId).length === 2, 5_000, 20);
  expect(accountEvents(outsiderEvents)).toEqual([]);
});

test('pairing by code: a phone number gets a pairing code instead of a QR', async () => {
  const accountId = await whatsappAccount();
  const res = await call(api, 'POST', `/v1/accounts/${accountId}/pair`, tenant.token, { phoneNumber: '+60123450002' });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ status: 'pairing', pairingCode: expect.stringMatching(/^[0-9A-Z]{8}$/), expiresAt: new Date(NOW + 180_000).toISOString() });
  // Baileys records the number as the device's user while the phone confirms
  await eventually(
    'the number is in the stored credentials',
    async () => {
      const stored = await loadAuthState(auth, accountId, [SECRETS_KEY], clock);
      return stored.state.creds.me?.id === '60123450002@s.whatsapp.net';
    },
    5_000,
    20,
  );
  network.completePairing(accountId, '60123450002');
  await eventually('the account is active', async () => (await status(accountId)) === 'active', 10_000, 20);
});

test('a pairing nobody confirms expires: the account falls back to disconnected and the lease is released', async () => {
  const shortPool = makePool(network, leases, auth, [SECRETS_KEY], clock, { qrTtlMs: 150 });
  const shortApp = await buildApp({
    ...{ config: api.config, db: database.db, redis, queue, clock, logger: createLogger('t', 'silent') },
    whatsappPairing: shortPool,
  });
  try {
    const accountId = await whatsappAccount();
    const res = await shortApp.inject({ method: 'POST', url: `/v1/accounts/${accountId}/pair`, headers: { authorization: `Bearer ${tenant.token}` } });
    expect(res.statusCode).toBe(200);
    expect(await status(accountId)).toBe('pairing');
    await eventually('the pairing expired', async () => (await status(accountId)) === 'disconnected', 10_000, 20);
    await eventually('the lease is released', async () => (await redis.get(redisKeys(prefix).socketLease(accountId))) === null, 5_000, 20);
    expect(network.openSocket(accountId)).toBeUndefined();
  } finally {
    await shortApp.close();
    await shortPool.close();
  }
});

test('pairing again restarts from fresh credentials; the first attempt does not report an end', async () => {
  const accountId = await whatsappAccount();
  const first = await call(api, 'POST', `/v1/accounts/${accountId}/pair`, tenant.token);
  const second = await call(api, 'POST', `/v1/accounts/${accountId}/pair`, tenant.token);
  expect([first.status, second.status]).toEqual([200, 200]);
  expect(second.body.qr).not.toBe(first.body.qr);
  expect(await status(accountId)).toBe('pairing');
  network.completePairing(accountId);
  await eventually('the account is active', async () => (await status(accountId)) === 'active', 10_000, 20);
  expect(network.maxOpenAtOnce(accountId)).toBe(1);
});

test('the body is validated, naming the field', async () => {
  const accountId = await whatsappAccount();
  for (const phoneNumber of ['abc', '0123456789', '+6012 345', '1234', 60123456789]) {
    const res = await call(api, 'POST', `/v1/accounts/${accountId}/pair`, tenant.token, { phoneNumber });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(fields(res)).toEqual(['phoneNumber']);
  }
  const extra = await call(api, 'POST', `/v1/accounts/${accountId}/pair`, tenant.token, { phone: '60123456789' });
  expect(extra.status).toBe(400);
  expect(await status(accountId)).toBe('disconnected');
});

test('only whatsapp accounts pair, only when not active, only for their own tenant', async () => {
  const httpAccount = await call(api, 'POST', '/v1/accounts', tenant.token, {
    platform: 'http',
    credentials: { apiKey: 'sandbox-api-key-0001' },
    name: 'h',
    externalId: 'pair-http',
  });
  const notWhatsapp = await call(api, 'POST', `/v1/accounts/${httpAccount.body.id}/pair`, tenant.token, {});
  expect(notWhatsapp.status).toBe(409);
  expect(notWhatsapp.body.error.code).toBe('conflict');

  const other = await createTenant(api, 'other');
  const foreign = await whatsappAccount(other);
  const res = await call(api, 'POST', `/v1/accounts/${foreign}/pair`, tenant.token, {});
  expect(res.status).toBe(404);
  expect(res.body.error.code).toBe('not_found');
  expect((await call(api, 'GET', `/v1/accounts/${foreign}`, other.token)).body.status).toBe('disconnected');
  expect((await call(api, 'POST', `/v1/accounts/00000000-0000-0000-0000-000000000000/pair`, tenant.token, {})).status).toBe(404);
  // the operator may pair any tenant's account
  expect((await call(api, 'POST', `/v1/accounts/${foreign}/pair`, ADMIN_TOKEN, {})).status).toBe(200);

  const active = await whatsappAccount();
  await api.db.updateTable('accounts').set({ status: 'active' }).where('id', '=', active).execute();
  expect((await call(api, 'POST', `/v1/accounts/${active}/pair`, tenant.token, {})).status).toBe(409);
});

test('the route is in the OpenAPI document', async () => {
  const res = await call(api, 'GET', '/openapi.json', null);
  const op = res.body.paths['/v1/accounts/{id}/pair']?.post;
  expect(op).toBeDefined();
  expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '409']));
  expect(JSON.stringify(op.requestBody)).toContain('phoneNumber');
});
