import { randomBytes } from 'node:crypto';
import { ManualClock } from '@metronome/core';
import { ChatDirectoryRepository, WhatsAppAuthRepository } from '@metronome/db';
import { createRedis } from '@metronome/redis';
import type { TransportAccount } from '@metronome/transports';
import { WhatsAppTransport } from '@metronome/transports/whatsapp';
import type { Redis } from 'ioredis';
import { FakeWhatsAppNetwork } from '../helpers/fake-whatsapp-socket.js';
import { ManualTimers } from '../helpers/manual-timers.js';
import { createTestDatabase, eventually, REDIS_URL, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';
import { insertWhatsAppAccount, makePool, quietLogger, seedPairedAuth, socketLeases } from './whatsapp-setup.js';

// The WhatsApp side of the chat directory written to the REAL directory (PostgreSQL, the
// repository the senders use), from a FAKE WhatsApp holding 1,000 groups of the account: what
// the operator's `GET /v1/accounts/{id}/chats` reads.

const KEYS = [randomBytes(32)];
let tdb: TestDatabase;
let redis: Redis;
let directory: ChatDirectoryRepository;
let network: FakeWhatsAppNetwork;
let transport: WhatsAppTransport;
let account: TransportAccount;

beforeAll(async () => {
  tdb = await createTestDatabase('wa_directory_db');
  redis = createRedis(REDIS_URL, 'test-wa-directory-db');
  directory = new ChatDirectoryRepository(tdb.db);
});
beforeEach(async () => {
  const clock = new ManualClock(Date.parse('2026-06-01T09:00:00Z'));
  const auth = new WhatsAppAuthRepository(tdb.db);
  network = new FakeWhatsAppNetwork(clock);
  const pool = makePool(network, socketLeases(redis, uniquePrefix('wa-dir-db')), auth, KEYS, clock, { directory, timers: new ManualTimers(clock) });
  transport = new WhatsAppTransport({ pool, clock, logger: quietLogger, timeoutMs: 5_000 });
  const { accountId } = await insertWhatsAppAccount(tdb.db);
  await seedPairedAuth(auth, accountId, KEYS, clock);
  account = { id: accountId, externalId: null, credentials: null };
});
afterEach(async () => {
  await transport.close();
});
afterAll(async () => {
  await redis.quit();
  await tdb.drop();
});

const entry = async (chatId: string) => (await directory.list(account.id, { limit: 2_000 })).find((e) => e.chatId === chatId);

test('1,000 groups stored from one listing; events change the stored entries without another; a one-to-one chat outlives the next listing', async () => {
  const groups = network.groupBook.addMany(account.id, 1_000);
  await transport.syncDirectory(account, directory);
  expect(network.groupFetches).toHaveLength(1);
  expect(await directory.list(account.id, { limit: 2_000, kind: 'group' })).toHaveLength(1_000);
  expect(await directory.syncOf(account.id)).toMatchObject({ status: 'ok', size: 1_000 });

  // A person writes to the account: a one-to-one entry, titled by their name.
  network.fakeIncomingMessage(account.id, { from: '60122222222@s.whatsapp.net', text: 'hi', pushName: 'Aisha' });
  await eventually('direct chat stored', async () => (await entry('60122222222@s.whatsapp.net'))?.title === 'Aisha', 5_000, 10);

  const [renamed, announced, left] = groups as [string, string, string];
  network.groupBook.rename(renamed, 'Parents, class 3B');
  network.groupBook.setAnnounce(announced, true);
  network.groupBook.leave(account.id, left);
  await eventually(
    'events stored',
    async () => (await entry(left))?.canSend === false && (await entry(announced))?.canSend === false && (await entry(renamed))?.title === 'Parents, class 3B',
    5_000,
    10,
  );
  expect(await entry(announced)).toMatchObject({ cannotSendReason: 'announce_only' });
  expect(await entry(left)).toMatchObject({ cannotSendReason: 'left' });
  // found by the search the console's picker uses, any case, accents folded
  expect((await directory.list(account.id, { limit: 10, query: 'PARENTS, CLASS' })).map((e) => e.chatId)).toEqual([renamed]);
  expect(network.groupFetches).toHaveLength(1);

  // A send to the group it left fails with a code, and the entry stays marked.
  expect(
    await transport.send(account, { chatId: left, part: { type: 'text', text: 'hello' }, partIndex: 0, partCount: 1, idempotencyKey: `r:${left}:0` }),
  ).toMatchObject({ kind: 'rejected', code: 'forbidden' });

  // The next complete listing covers groups only: the one-to-one chat keeps its entry and title.
  await transport.syncDirectory(account, directory);
  expect(await entry('60122222222@s.whatsapp.net')).toMatchObject({ kind: 'direct', title: 'Aisha', canSend: true });
});
