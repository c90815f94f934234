import { randomBytes } from 'node:crypto';
import { ManualClock } from '@metronome/core';
import { WhatsAppAuthRepository } from '@metronome/db';
import { createRedis } from '@metronome/redis';
import type { TransportAccount } from '@metronome/transports';
import { baileysSocketFactory, readLinkedSession, WhatsAppSocketPool, WhatsAppTransport } from '@metronome/transports/whatsapp';
import type { Redis } from 'ioredis';
import { createTestDatabase, eventually, REDIS_URL, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';
import { credsOnlyBundle } from '../helpers/wire-whatsapp.js';
import { startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';
import { insertWhatsAppAccount, quietLogger, socketLeases } from './whatsapp-setup.js';

// Another connection of the same device replaces the account's open one (WhatsApp's `conflict`
// stream error, which the real Baileys socket closes with 440): the operator's other program, or
// a replica that lost its lease. Taking the session straight back would make the two throw each
// other out; the account waits (`connection_replaced`) instead. WhatsApp here is a FAKE server of
// this project's own on the wire (test/helpers/wire-whatsapp-server.ts).

const KEYS = [randomBytes(32)];
const clock = new ManualClock(Date.parse('2026-12-01T09:00:00Z'));
let server: WireServer;
let database: TestDatabase;
let redis: Redis;
let pool: WhatsAppSocketPool;
let transport: WhatsAppTransport;

beforeAll(async () => {
  [server, database] = await Promise.all([startWireServer(), createTestDatabase('wa_conflict_wire')]);
  redis = createRedis(REDIS_URL, 'test-wa-conflict-wire');
  pool = new WhatsAppSocketPool({
    holderId: 'conflict-wire-test',
    lease: socketLeases(redis, uniquePrefix('wa-conflict-wire')),
    auth: new WhatsAppAuthRepository(database.db),
    secretsKeys: KEYS,
    makeSocket: baileysSocketFactory,
    webSocketUrl: server.url,
    clock,
    logger: quietLogger,
    queryTimeoutMs: 10_000,
    // one replica: no holder to wait out before connecting
    freshLeaseWaitMs: 0,
  });
  transport = new WhatsAppTransport({ pool, clock, logger: quietLogger, timeoutMs: 5_000 });
}, 60_000);
afterAll(async () => {
  await transport?.close();
  await redis?.quit();
  await database?.drop();
  await server?.close();
}, 30_000);

let seq = 0;
const send = (account: TransportAccount, chatId: string) =>
  transport.send(account, {
    chatId,
    part: { type: 'text', text: `hello ${chatId}` },
    partIndex: 0,
    partCount: 1,
    idempotencyKey: `wire-conflict:${chatId}:${seq++}`,
  });

test('a connection replaced after it opened is not taken back: sends and typing wait (connection_replaced) until the hold ends', async () => {
  const { accountId } = await insertWhatsAppAccount(database.db);
  const session = readLinkedSession(credsOnlyBundle('601990000'));
  if (!session.ok) throw new Error(session.message);
  expect(await pool.importSession(accountId, session.session)).toBeNull();
  const account: TransportAccount = { id: accountId, externalId: null, credentials: null };

  expect(await send(account, '60199000001')).toMatchObject({ kind: 'delivered' });
  const opened = server.opened;
  await server.push({ tag: 'stream:error', attrs: {}, content: [{ tag: 'conflict', attrs: { type: 'replaced' } }] });
  await eventually('the socket to close', async () => !pool.isOpen(accountId), 5_000, 10);

  expect(await send(account, '60199000002')).toEqual({ kind: 'account-wait', code: 'connection_replaced', retryAfterMs: 60_000 });
  await transport.showTyping(account, '60199000002', { type: 'text', text: 'x' });
  expect(server.opened).toBe(opened); // no new login: the other connection keeps the session
  expect(server.messages.map((m) => m.to)).toEqual(['60199000001@s.whatsapp.net']);

  clock.advance(60_000);
  expect(await send(account, '60199000002')).toMatchObject({ kind: 'delivered' });
  expect(server.opened).toBe(opened + 1);
}, 60_000);
