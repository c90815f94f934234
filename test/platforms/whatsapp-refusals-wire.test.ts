import { randomBytes } from 'node:crypto';
import { systemClock } from '@metronome/core';
import { WhatsAppAuthRepository } from '@metronome/db';
import { createRedis } from '@metronome/redis';
import type { TransportAccount } from '@metronome/transports';
import { baileysSocketFactory, readLinkedSession, WhatsAppSocketPool, WhatsAppTransport, type MessageRefusal } from '@metronome/transports/whatsapp';
import type { Redis } from 'ioredis';
import { createTestDatabase, eventually, REDIS_URL, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';
import { credsOnlyBundle } from '../helpers/wire-whatsapp.js';
import { startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';
import { insertWhatsAppAccount, quietLogger, socketLeases } from './whatsapp-setup.js';

// Messages WhatsApp refuses after the write (a server ERROR ack), as the real Baileys socket reads
// them from a FAKE WhatsApp Web server of this project's own on the wire
// (test/helpers/wire-whatsapp-server.ts; its behaviours pinned in whatsapp-wire-server.test.ts).
// Baileys folds an ack that comes while it buffers events into the sent message's own upsert
// (Utils/event-buffer.js): the refusal is read there too, or it is lost and the target stays sent.

const KEYS = [randomBytes(32)];
let server: WireServer;
let database: TestDatabase;
let redis: Redis;
let pool: WhatsAppSocketPool;
let transport: WhatsAppTransport;
const refusals: MessageRefusal[] = [];

beforeAll(async () => {
  [server, database] = await Promise.all([startWireServer(), createTestDatabase('wa_refusals_wire')]);
  redis = createRedis(REDIS_URL, 'test-wa-refusals-wire');
  pool = new WhatsAppSocketPool({
    holderId: 'refusals-wire-test',
    lease: socketLeases(redis, uniquePrefix('wa-refusals-wire')),
    auth: new WhatsAppAuthRepository(database.db),
    secretsKeys: KEYS,
    makeSocket: baileysSocketFactory,
    webSocketUrl: server.url,
    clock: systemClock,
    logger: quietLogger,
    queryTimeoutMs: 10_000,
    // one replica: no holder to wait out before connecting
    freshLeaseWaitMs: 0,
    onMessageRefused: (r) => refusals.push(r),
  });
  transport = new WhatsAppTransport({ pool, clock: systemClock, logger: quietLogger, timeoutMs: 5_000 });
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
    idempotencyKey: `wire-refusals:${chatId}:${seq++}`,
  });

test('479 and then 463 after the write reach the sender as refusals of those chats, the first folded into its own upsert by Baileys', async () => {
  const { accountId } = await insertWhatsAppAccount(database.db);
  const session = readLinkedSession(credsOnlyBundle('601880000'));
  if (!session.ok) throw new Error(session.message);
  expect(await pool.importSession(accountId, session.session)).toBeNull();
  const account: TransportAccount = { id: accountId, externalId: null, credentials: null };
  server.ack = ({ to }) => (to.startsWith('60188000479') ? { error: '479' } : to.startsWith('60188000463') ? { error: '463' } : null);

  // the first send on a new socket: its ack comes while Baileys still buffers events
  expect(await send(account, '60188000479')).toMatchObject({ kind: 'delivered' });
  await eventually('the 479 told', async () => refusals.length === 1, 5_000, 10);
  expect(refusals[0]).toMatchObject({ accountId, chatId: '60188000479', refusal: { kind: 'rejected', code: 'message_invalid' } });

  expect(await send(account, '60188000463')).toMatchObject({ kind: 'delivered' });
  await eventually('the 463 told', async () => refusals.length === 2, 5_000, 10);
  // the account's next send is held, not written: it is restricted until an operator lifts it
  expect(await send(account, '60188000001')).toMatchObject({ kind: 'account-unavailable', code: 'account_restricted' });
  expect(refusals[1]).toMatchObject({ accountId, chatId: '60188000463', refusal: { kind: 'account-restricted', code: 'account_restricted' } });
  expect(server.messages.map((m) => m.to)).toEqual(['60188000479@s.whatsapp.net', '60188000463@s.whatsapp.net']);
}, 60_000);
