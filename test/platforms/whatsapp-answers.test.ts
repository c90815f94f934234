import { randomBytes } from 'node:crypto';
import { ManualClock } from '@metronome/core';
import { WhatsAppAuthRepository } from '@metronome/db';
import { WhatsAppTransport, type WhatsAppSocketPool } from '@metronome/transports/whatsapp';
import type { Redis } from 'ioredis';
import { createRedis } from '@metronome/redis';
import { FakeWhatsAppNetwork } from '../helpers/fake-whatsapp-socket.js';
import { ManualTimers } from '../helpers/manual-timers.js';
import { createTestDatabase, eventually, REDIS_URL, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';
import { insertWhatsAppAccount, makePool, quietLogger, seedPairedAuth, socketLeases } from './whatsapp-setup.js';

// WhatsApp's answers that come before the write, at connect, or after the write (docs/platforms.md
// "What each answer means for a run"), on the real transport and socket pool over a FAKE
// WhatsApp whose answers are shaped as Baileys emits them. A manual clock runs every timer.

const KEYS = [randomBytes(32)];
const GROUP = '120363000000000001@g.us';
let tdb: TestDatabase;
let redis: Redis;
let auth: WhatsAppAuthRepository;
let clock: ManualClock;
let timers: ManualTimers;
let network: FakeWhatsAppNetwork;
let pool: WhatsAppSocketPool;
let transport: WhatsAppTransport;

beforeAll(async () => {
  tdb = await createTestDatabase('wa_answers');
  redis = createRedis(REDIS_URL, 'test-wa-answers');
  auth = new WhatsAppAuthRepository(tdb.db);
});
function start(queryTimeoutMs: number): void {
  clock = new ManualClock(Date.parse('2026-06-01T09:00:00Z'));
  timers = new ManualTimers(clock);
  network = new FakeWhatsAppNetwork(clock);
  network.answers.useTimers(timers);
  network.addGroup(GROUP, ['60100000001@s.whatsapp.net']);
  pool = makePool(network, socketLeases(redis, uniquePrefix('wa-answers')), auth, KEYS, clock, { queryTimeoutMs });
  transport = new WhatsAppTransport({ pool, clock, logger: quietLogger, timeoutMs: 5_000, timers });
}
afterEach(async () => {
  await transport.close();
});
afterAll(async () => {
  await redis.quit();
  await tdb.drop();
});

async function pairedAccount(): Promise<string> {
  const { accountId } = await insertWhatsAppAccount(tdb.db);
  await seedPairedAuth(auth, accountId, KEYS, clock);
  return accountId;
}

const send = (accountId: string, chatId: string, key: string) =>
  transport.send(
    { id: accountId, platform: 'whatsapp', credentials: {} } as never,
    { chatId, idempotencyKey: key, part: { type: 'text', text: 'hello' } } as never,
  );

test("a 30 s group metadata fetch before the write: the send timeout has not started, and Baileys' query timeout is retried, never unknown", async () => {
  start(20_000);
  const accountId = await pairedAccount();
  network.answers.slowGroupMetadata(accountId, 30_000);
  const result = send(accountId, GROUP, 'run:slow:0');
  await eventually('the group lookup waiting on the clock', async () => timers.dueTimes().length === 1, 10_000, 10);
  // well past the send timeout (5 s): nothing was written, so nothing timed out yet
  timers.advanceTo(clock.now() + 10_000);
  timers.advanceTo(clock.now() + 10_000);
  expect(await result).toMatchObject({ kind: 'retriable', code: 'timed_out' });
  expect(network.messages).toHaveLength(0);
});

test('a 30 s group metadata fetch within the query timeout: the message is written and delivered, the send timeout counted from the write', async () => {
  start(60_000);
  const accountId = await pairedAccount();
  network.answers.slowGroupMetadata(accountId, 30_000);
  const result = send(accountId, GROUP, 'run:slow:1');
  await eventually('the group lookup waiting on the clock', async () => timers.dueTimes().length === 1, 10_000, 10);
  timers.advanceTo(clock.now() + 30_000);
  expect(await result).toMatchObject({ kind: 'delivered' });
  expect(network.messages).toHaveLength(1);
});

test('405 on connect: client_outdated, the account unavailable after one attempt', async () => {
  start(60_000);
  const accountId = await pairedAccount();
  network.answers.refuseConnect(accountId, 405);
  expect(await send(accountId, '60111111111', 'run:old:0')).toMatchObject({ kind: 'account-unavailable', code: 'client_outdated' });
  expect(network.answers.connectAttempts.filter((a) => a.accountId === accountId)).toHaveLength(1);
  expect(network.messages).toHaveLength(0);
});
