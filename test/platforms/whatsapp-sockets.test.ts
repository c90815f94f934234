import { randomBytes } from 'node:crypto';
import { ManualClock } from '@metronome/core';
import { WhatsAppAuthRepository } from '@metronome/db';
import { ConnectRate, createRedis, loadScripts, redisKeys, SocketLeases } from '@metronome/redis';
import type { WhatsAppSocketPool } from '@metronome/transports/whatsapp';
import type { Redis } from 'ioredis';
import { FakeWhatsAppNetwork } from '../helpers/fake-whatsapp-socket.js';
import { createTestDatabase, eventually, REDIS_URL, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';
import { insertWhatsAppAccount, makePool, seedPairedAuth, socketLeases } from './whatsapp-setup.js';

// One live WhatsApp socket per account across the cluster: two replicas' pools share one Redis
// and one FAKE WhatsApp network, which records every connection and replaces an older one
// when a device connects twice (as WhatsApp does). Handing over must never make it do that.

const KEYS = [randomBytes(32)];
let tdb: TestDatabase;
let redis: Redis;
let prefix: string;
let auth: WhatsAppAuthRepository;
const clock = new ManualClock(Date.parse('2026-06-01T09:00:00Z'));
let network: FakeWhatsAppNetwork;
let a: WhatsAppSocketPool;
let b: WhatsAppSocketPool;

beforeAll(async () => {
  tdb = await createTestDatabase('wa_sockets');
  redis = createRedis(REDIS_URL, 'test-wa-sockets');
  auth = new WhatsAppAuthRepository(tdb.db);
});
beforeEach(() => {
  prefix = uniquePrefix('wa');
  network = new FakeWhatsAppNetwork(clock);
  const leases = socketLeases(redis, prefix);
  a = makePool(network, leases, auth, KEYS, clock);
  b = makePool(network, leases, auth, KEYS, clock);
});
afterEach(async () => {
  await Promise.all([a.close(), b.close()]);
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

const say = (text: string, id: string) => (s: Parameters<Parameters<WhatsAppSocketPool['use']>[1]>[0]) =>
  s.sendMessage('60111111111@s.whatsapp.net', { text }, { messageId: id });

/** Polls `pool.use` (asking for a hand-over) until the socket is this pool's and `work` ran on it. */
function usedOnceFree(pool: WhatsAppSocketPool, accountId: string, work: Parameters<WhatsAppSocketPool['use']>[1], what: string) {
  return eventually(
    what,
    async () => {
      const r = await pool.use(accountId, work);
      return r.ok ? r : null;
    },
    5_000,
    10,
  );
}

test('a socket is opened once and kept across uses, holding the lease', async () => {
  const accountId = await pairedAccount();
  expect((await a.use(accountId, say('one', 'M1'))).ok).toBe(true);
  expect((await a.use(accountId, say('two', 'M2'))).ok).toBe(true);
  expect(network.sockets.filter((s) => s.accountId === accountId)).toHaveLength(1);
  expect(await redis.get(redisKeys(prefix).socketLease(accountId))).not.toBeNull();
  expect(network.messages.map((m) => m.messageId)).toEqual(['M1', 'M2']);
});

test("a connect reads the account's proxy only when the caller names none (a send and the holder name it)", async () => {
  const asked: string[] = [];
  const pool = makePool(network, socketLeases(redis, prefix), auth, KEYS, clock, { proxyOf: async (id) => (asked.push(id), null) });
  const [named, unnamed] = [await pairedAccount(), await pairedAccount()];
  expect((await pool.use(named, say('named', 'P1'), null)).ok).toBe(true);
  expect((await pool.use(unnamed, say('unnamed', 'P2'))).ok).toBe(true);
  expect(asked).toEqual([unnamed]);
  await pool.close();
});

test('another replica is refused while the socket is held, asks for it, and gets it without overlap', async () => {
  const accountId = await pairedAccount();
  expect((await a.use(accountId, say('from a', 'A1'))).ok).toBe(true);
  // A send in flight on a while b asks: a finishes it before closing.
  const release = network.holdSends(accountId);
  const inFlight = a.use(accountId, say('in flight', 'A2'));
  await eventually('the in-flight send reached the server', async () => network.messages.some((m) => m.messageId === 'A2'), 5_000, 5);
  const refused = await b.use(accountId, say('from b', 'B1'));
  expect(refused).toEqual({ ok: false, reason: 'busy' });
  expect(await redis.get(redisKeys(prefix).socketHandover(accountId))).not.toBeNull();
  expect(a.isOpen(accountId)).toBe(true);
  release();
  expect((await inFlight).ok).toBe(true);

  // b's job comes back later (here: polls) and finds the socket handed over.
  const got = await usedOnceFree(b, accountId, say('from b', 'B1'), 'b gets the socket');
  expect(got.ok).toBe(true);
  expect(a.isOpen(accountId)).toBe(false);
  expect(b.isOpen(accountId)).toBe(true);
  expect(network.maxOpenAtOnce(accountId)).toBe(1);
  expect(network.replacements).toEqual([]);
  expect(network.messages.map((m) => m.messageId)).toEqual(['A1', 'A2', 'B1']);
  const [first, second] = network.sockets.filter((s) => s.accountId === accountId);
  expect(
    network.timeline
      .filter((e) => e.accountId === accountId)
      .map((e) => `${e.event}:${e.socketId === first!.id ? 'a' : e.socketId === second!.id ? 'b' : '?'}`),
  ).toEqual(['open:a', 'close:a', 'open:b']);
});

test('a holder that lost its lease closes its socket at once', async () => {
  const accountId = await pairedAccount();
  expect((await a.use(accountId, say('hi', 'L1'))).ok).toBe(true);
  await redis.set(redisKeys(prefix).socketLease(accountId), 'another-replica', 'PX', 5_000);
  await eventually('a closed its socket', async () => !a.isOpen(accountId) && !network.openSocket(accountId), 5_000, 10);
  // the lease is not a's to release: the other holder keeps it
  expect(await redis.get(redisKeys(prefix).socketLease(accountId))).toBe('another-replica');
});

test('closing a pool closes its sockets and releases their leases', async () => {
  const accountId = await pairedAccount();
  expect((await a.use(accountId, say('hi', 'C1'))).ok).toBe(true);
  await a.close();
  expect(network.openSocket(accountId)).toBeUndefined();
  expect(await redis.get(redisKeys(prefix).socketLease(accountId))).toBeNull();
  expect((await b.use(accountId, say('after', 'C2'))).ok).toBe(true);
  expect(network.maxOpenAtOnce(accountId)).toBe(1);
});

test('an account that was never paired is refused without connecting', async () => {
  const { accountId } = await insertWhatsAppAccount(tdb.db);
  expect(await a.use(accountId, say('x', 'N1'))).toEqual({ ok: false, reason: 'not-paired' });
  expect(network.sockets).toHaveLength(0);
  expect(await redis.get(redisKeys(prefix).socketLease(accountId))).toBeNull();
});

test('a logged-out device is refused with the server’s reason, and its lease let go', async () => {
  const accountId = await pairedAccount();
  network.loggedOut.add(accountId);
  const r = await a.use(accountId, say('x', 'O1'));
  expect(r).toMatchObject({ ok: false, reason: 'connect-failed', failure: { source: 'connection', statusCode: 401 } });
  expect(await redis.get(redisKeys(prefix).socketLease(accountId))).toBeNull();
});

test('Redis losing the lease while the socket is open: the holder takes it back at its next renewal, and another replica is still refused', async () => {
  const accountId = await pairedAccount();
  expect((await a.use(accountId, say('before', 'F1'))).ok).toBe(true);
  const key = redisKeys(prefix).socketLease(accountId);
  const holder = await redis.get(key);
  expect(holder).not.toBeNull();
  // what a flushed or restarted Redis leaves of this account: nothing
  await redis.del(key, redisKeys(prefix).socketHandover(accountId));
  await eventually('the holder to take its lease back', async () => (await redis.get(key)) === holder, 5_000, 5);
  expect(a.isOpen(accountId)).toBe(true);
  expect(await b.use(accountId, say('from b', 'F2'))).toEqual({ ok: false, reason: 'busy' });
  expect((await a.use(accountId, say('after', 'F3'))).ok).toBe(true);
  expect(network.sockets.filter((s) => s.accountId === accountId)).toHaveLength(1);
  expect(network.replacements).toEqual([]);
});

test('the pool reports each socket it opens and closes, and why, for metrics', async () => {
  const accountId = await pairedAccount();
  const seen: unknown[] = [];
  const leases = socketLeases(redis, prefix);
  const watched = makePool(network, leases, auth, KEYS, clock, { onSocket: (e) => seen.push(e) });
  try {
    expect((await watched.use(accountId, say('one', 'W1'))).ok).toBe(true);
    expect((await watched.use(accountId, say('two', 'W2'))).ok).toBe(true);
    expect(seen).toEqual([{ kind: 'opened' }]);
    // another replica asks for the socket: this one hands it over
    expect((await b.use(accountId, say('from b', 'W3'))).ok).toBe(false);
    await eventually('the socket handed over', async () => seen.length === 2, 5_000, 10);
    expect(seen[1]).toEqual({ kind: 'closed', wasOpen: true, why: 'handed over' });
  } finally {
    await watched.close();
  }
});

test('Redis losing the lease, and another replica connecting in that gap: the old holder closes first, the connections never overlap', async () => {
  const accountId = await pairedAccount();
  // The gap is a race in time: the holder's next renewal (every 25 ms) would take the lost lease
  // back before the other replica asks. Its renewals wait at a gate, so the order is fixed:
  // the lease vanishes, c takes it, and only then does the holder renew and learn it is lost.
  let openGate = (): void => undefined;
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  let held = false;
  class GatedLeases extends SocketLeases {
    override async renew(...args: Parameters<SocketLeases['renew']>): ReturnType<SocketLeases['renew']> {
      if (held) await gate;
      return super.renew(...args);
    }
  }
  const holder = makePool(network, new GatedLeases(loadScripts(redis), redisKeys(prefix), 2_000), auth, KEYS, clock);
  const c = makePool(network, socketLeases(redis, prefix), auth, KEYS, clock, { freshLeaseWaitMs: 1_000 });
  try {
    expect((await holder.use(accountId, say('before', 'G1'))).ok).toBe(true);
    const key = redisKeys(prefix).socketLease(accountId);
    const holderId = await redis.get(key);
    held = true;
    // what a flushed Redis leaves of this account: nothing; and another replica asks at once
    await redis.del(key, redisKeys(prefix).socketHandover(accountId));
    const asked = c.use(accountId, say('from c', 'G2'));
    await eventually('c to take the free lease', async () => ![null, holderId].includes(await redis.get(key)), 5_000, 5);
    openGate();
    const got = await asked;
    // c took the free lease, waited a renewal out: the holder saw the lease taken and closed its socket
    expect(got.ok).toBe(true);
    expect(holder.isOpen(accountId)).toBe(false);
    expect(network.maxOpenAtOnce(accountId)).toBe(1);
    expect(network.replacements).toEqual([]);
  } finally {
    openGate();
    await Promise.all([holder.close(), c.close()]);
  }
});

test('a lease let go after its socket closed is taken and connected at once (the wait on a lease found free by a flush is the test below)', async () => {
  const accountId = await pairedAccount();
  // a renewal out is a minute here: a connect that waits it does not end within the test
  const c = makePool(network, socketLeases(redis, prefix), auth, KEYS, clock, { freshLeaseWaitMs: 60_000 });
  const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), ms))]);
  try {
    expect((await a.use(accountId, say('from a', 'H1'))).ok).toBe(true);
    expect(await a.letGo(accountId, true)).toBe(true);
    expect(await within(c.use(accountId, say('from c', 'H2'), undefined, false), 5_000)).toMatchObject({ ok: true });
    expect(network.maxOpenAtOnce(accountId)).toBe(1);
    expect(network.replacements).toEqual([]);
  } finally {
    await c.close();
  }
});

test('a socket handed to another replica is not opened again here within the patience, though its lease is free: a running job on the old holder does not race the new one', async () => {
  const accountId = await pairedAccount();
  expect((await a.use(accountId, say('from a', 'A1'))).ok).toBe(true);
  expect(await a.letGo(accountId)).toBe(true);
  expect(await redis.get(redisKeys(prefix).socketLease(accountId))).toBeNull();
  // a's job sends its next part before b's holder opened the socket: refused, nothing opened
  expect(await a.use(accountId, say('from a again', 'A2'))).toEqual({ ok: false, reason: 'busy' });
  expect((await b.use(accountId, say('from b', 'B1'), null, false)).ok).toBe(true);
  // past the patience a may ask for it again, and gets it handed over
  clock.advance(10_000);
  const got = await usedOnceFree(a, accountId, say('from a later', 'A3'), 'a gets the socket back by asking');
  expect(got.ok).toBe(true);
  expect(network.messages.map((m) => m.messageId)).toEqual(['A1', 'B1', 'A3']);
  expect(network.maxOpenAtOnce(accountId)).toBe(1);
});

test("sends that must open a socket wait their turn of the cluster-wide connect pace; the account holder's connect, paced already, does not", async () => {
  const rate = new ConnectRate(loadScripts(redis), redisKeys(prefix), 1);
  const refusals: number[] = [];
  const connectPace = { take: async (now: number) => rate.take(now).then((wait) => (wait > 0 && refusals.push(wait), wait)) };
  // the pace's waits are the manual clock's: a pause between tries need not be long
  const timers = { setTimeout: (fn: () => void) => ({ cancel: clearTimeout.bind(null, setTimeout(fn, 5)) }) };
  const pool = makePool(network, socketLeases(redis, prefix), auth, KEYS, clock, { connectPace, timers });
  const [first, second, third, fourth] = [await pairedAccount(), await pairedAccount(), await pairedAccount(), await pairedAccount()];
  const opened = (accountId: string) => network.sockets.some((s) => s.accountId === accountId);
  expect((await pool.use(first, say('first', 'T1'))).ok).toBe(true);
  const secondSent = pool.use(second, say('second', 'T2'));
  const fourthSent = pool.use(fourth, say('fourth', 'T4'));
  await eventually('the pace refusing the second twice', async () => refusals.length >= 2, 5_000, 5);
  expect([opened(second), opened(fourth)]).toEqual([false, false]);
  expect(refusals[0]).toBe(1_000);
  // a send waiting for its turn holds nothing yet: the account holder may plan the account elsewhere (issue 53)
  expect(pool.heldAccounts().map((h) => h.accountId)).toEqual([first]);
  // the holder takes its own turn before it asks (account-holder.ts): not paced again, and a send waiting for that account goes with it
  expect((await pool.use(third, async () => undefined, undefined, false)).ok).toBe(true);
  expect((await pool.use(second, async () => undefined, undefined, false)).ok).toBe(true);
  expect((await secondSent).ok).toBe(true);
  expect(opened(fourth)).toBe(false);
  clock.advance(1_000);
  expect((await fourthSent).ok).toBe(true);
  await pool.close();
});
