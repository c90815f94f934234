import { randomBytes } from 'node:crypto';
import { ManualClock } from '@metronome/core';
import { createDb, WhatsAppAuthRepository, type DB } from '@metronome/db';
import { createRedis } from '@metronome/redis';
import { startPrivatePostgres, type PrivatePostgres } from '@metronome/testkit';
import type { TransportAccount } from '@metronome/transports';
import { WhatsAppTransport, type WhatsAppSocketPool } from '@metronome/transports/whatsapp';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { FakeWhatsAppNetwork } from '../helpers/fake-whatsapp-socket.js';
import { eventually, REDIS_URL, uniquePrefix } from '../helpers/test-env.js';
import { insertWhatsAppAccount, makePool, quietLogger, seedPairedAuth, socketLeases } from './whatsapp-setup.js';

// Keys never behind: Baileys' cacheable key store updates its cache before the store, so a key
// write PostgreSQL refuses leaves the socket using keys the store does not have. PostgreSQL here
// is a server of this test's own, stopped and started again; WhatsApp is a FAKE network whose
// sockets write keys as Baileys does (a send to a new contact stores the contact's LID pair).

const KEYS = [randomBytes(32)];
const clock = new ManualClock(Date.parse('2026-06-01T09:00:00Z'));
let pgServer: PrivatePostgres;
let db: Kysely<DB>;
let redis: Redis;
let network: FakeWhatsAppNetwork;
let pool: WhatsAppSocketPool;
let leases: ReturnType<typeof socketLeases>;
let transport: WhatsAppTransport;

beforeAll(async () => {
  pgServer = await startPrivatePostgres();
  db = createDb({ url: pgServer.url, max: 2, applicationName: 'metronome-test' });
  redis = createRedis(REDIS_URL, 'test-wa-keys');
  network = new FakeWhatsAppNetwork(clock);
  leases = socketLeases(redis, uniquePrefix('wa-keys'));
  pool = makePool(network, leases, new WhatsAppAuthRepository(db), KEYS, clock);
  transport = new WhatsAppTransport({ pool, clock, logger: quietLogger, timeoutMs: 5_000 });
}, 120_000);
afterAll(async () => {
  await transport?.close();
  await db?.destroy();
  await redis?.quit();
  await pgServer?.destroy();
}, 60_000);

let seq = 0;
const send = (account: TransportAccount, chatId: string) =>
  transport.send(account, {
    chatId,
    part: { type: 'text', text: `hello ${chatId}` },
    partIndex: 0,
    partCount: 1,
    idempotencyKey: `keys-run:${chatId}:${seq++}`,
  });

test('a key write PostgreSQL refuses closes the socket and holds the sends (keys_unsaved); once it is back the keys are written and the account reconnects without a new pairing', async () => {
  const auth = new WhatsAppAuthRepository(db);
  const { accountId } = await insertWhatsAppAccount(db);
  await seedPairedAuth(auth, accountId, KEYS, clock);
  const account: TransportAccount = { id: accountId, externalId: null, credentials: null };
  network.lids.assign('60100000081', '987650000081');
  const seededCreds = await auth.readCreds(accountId);
  expect(await send(account, '60100000080')).toMatchObject({ kind: 'delivered' });
  // The opening's own credentials write (the device's LID) is not awaited by the send: it must be
  // in PostgreSQL before the stop, or the refused write would be that one, not the LID pair's.
  await eventually('the opening stored its credentials', async () => !(await auth.readCreds(accountId))?.equals(seededCreds!), 10_000, 20);
  const socketsBefore = network.sockets.length;

  await pgServer.stop();
  // A first send to a contact with a LID: the device lookup's key write is refused.
  expect(await send(account, '60100000081')).not.toMatchObject({ kind: 'delivered' });
  expect(network.messagesTo('60100000081@s.whatsapp.net')).toEqual([]);
  // The socket is closed at once: no further message can use keys the store does not have.
  expect(network.openSocket(accountId)).toBeUndefined();
  expect(pool.isOpen(accountId)).toBe(false);
  // The account waits, with a code that says why; no new socket, and the lease stays here.
  expect(await send(account, '60100000082')).toEqual({ kind: 'account-wait', code: 'keys_unsaved', retryAfterMs: expect.any(Number) });
  expect(network.sockets.length).toBe(socketsBefore);
  expect(await leases.peek(accountId, 'another-replica')).toBe('other');

  await pgServer.start();
  // Back: the kept rows are written before anything else, and the same pairing connects again.
  let result = await send(account, '60100000083');
  await eventually('a send goes through after the restart', async () => (result = await send(account, '60100000083')).kind === 'delivered', 30_000, 200);
  expect(result).toMatchObject({ kind: 'delivered' });
  expect(network.openSocket(accountId)).toBeDefined();
  expect(network.sockets.length).toBeGreaterThan(socketsBefore);
  // the row the refused write carried is in PostgreSQL now (no send to that contact since)
  expect([...(await auth.readKeys(accountId, 'lid-mapping', ['60100000081', '987650000081_reverse'])).keys()].sort()).toEqual([
    '60100000081',
    '987650000081_reverse',
  ]);
  expect(network.messagesTo('60100000081@s.whatsapp.net')).toEqual([]);
}, 120_000);
