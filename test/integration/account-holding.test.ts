import { ConnectRate, createRedis, loadScripts, redisKeys, SenderRegistry, SocketLeases } from '@metronome/redis';
import type { Redis } from 'ioredis';
import { REDIS_URL, uniquePrefix } from '../helpers/test-env.js';

// What the always-connected account holder reads and spends in Redis (libs/redis account-holding.ts):
// the live senders by heartbeat, the socket lease holders in one MGET, the cluster-wide connect pace.

let redis: Redis;
beforeAll(() => {
  redis = createRedis(REDIS_URL, 'test-account-holding');
});
afterAll(async () => {
  await redis.quit();
});

const T0 = 1_000_000;

test('a sender is live until its heartbeat runs out or it leaves', async () => {
  const registry = new SenderRegistry(redis, redisKeys(uniquePrefix('holding')));
  expect(await registry.beat('a', T0, 3_000)).toEqual(['a']);
  expect((await registry.beat('b', T0 + 1_000, 3_000)).sort()).toEqual(['a', 'b']);
  // a's heartbeat ran out at T0 + 3000; b's runs until T0 + 4000
  expect(await registry.beat('b', T0 + 3_000, 3_000)).toEqual(['b']);
  expect((await registry.beat('a', T0 + 3_500, 3_000)).sort()).toEqual(['a', 'b']);
  await registry.leave('a');
  expect(await registry.beat('b', T0 + 3_600, 3_000)).toEqual(['b']);
});

test('lease holders in one read: the holder, or null for a free account', async () => {
  const keys = redisKeys(uniquePrefix('holding'));
  const leases = new SocketLeases(loadScripts(redis), keys);
  await leases.acquire('acc-1', 'sender-a', 30_000);
  await leases.acquire('acc-3', 'sender-b', 30_000);
  const registry = new SenderRegistry(redis, keys);
  expect(await registry.leaseHolders(['acc-1', 'acc-2', 'acc-3'])).toEqual(['sender-a', null, 'sender-b']);
  expect(await registry.leaseHolders([])).toEqual([]);
});

test('connects are paced cluster-wide: one every 1/rate s, whichever sender asks, with a burst of one', async () => {
  const keys = redisKeys(uniquePrefix('holding'));
  const scripts = loadScripts(redis);
  // two senders sharing the pace, 1 a second (the key lives about an interval of real time: at 10 a second a CI pause
  // of 100 ms between two asks let it expire and the third ask through)
  const [a, b] = [new ConnectRate(scripts, keys, 1), new ConnectRate(scripts, keys, 1)];
  expect(await a.take(T0)).toBe(0);
  expect(await b.take(T0)).toBe(1_000);
  expect(await a.take(T0 + 600)).toBe(400);
  expect(await b.take(T0 + 1_000)).toBe(0);
  // asking as fast as they can, every 50 ms of clock for 100 s, at one a second: 100 get through, never more. The
  // key lives one interval of the caller's clock in real time (Redis' PX): 20 asks a second of real time keep it.
  const [c, d] = [new ConnectRate(scripts, keys, 1), new ConnectRate(scripts, keys, 1)];
  let granted = 0;
  for (let now = T0 + 2_000; now < T0 + 102_000; now += 50) if ((await (now % 100 ? c : d).take(now)) === 0) granted++;
  expect(granted).toBe(100);
});

test('a lease let go by its holder is handed: the next taker needs not wait out a socket the holder may still have', async () => {
  const keys = redisKeys(uniquePrefix('holding'));
  const leases = new SocketLeases(loadScripts(redis), keys);
  expect(await leases.acquire('acc-1', 'sender-a', 30_000)).toBe('taken');
  expect(await leases.release('acc-1', 'sender-b')).toBe(false);
  expect(await leases.release('acc-1', 'sender-a')).toBe(true);
  expect(await leases.acquire('acc-1', 'sender-b', 30_000)).toBe('handed');
  // the mark is used once; a lease gone by expiry (or a flush) leaves none
  await redis.del(keys.socketLease('acc-1'));
  expect(await leases.acquire('acc-1', 'sender-c', 30_000)).toBe('taken');
});

test('a holder that finds an account taken leaves it be; a job that needs it asks for it', async () => {
  const leases = new SocketLeases(loadScripts(redis), redisKeys(uniquePrefix('holding')));
  expect(await leases.acquire('acc-1', 'sender-a', 30_000)).toBe('taken');
  // sender b's holder lost the race for acc-1: no hand-over is asked, a keeps it
  expect(await leases.acquire('acc-1', 'sender-b', 30_000, false)).toBe('busy');
  expect(await leases.renew('acc-1', 'sender-a', 30_000)).toBe('held');
  // a send job on sender c asks: a is told to hand over at its next renewal
  expect(await leases.acquire('acc-1', 'sender-c', 30_000)).toBe('busy');
  expect(await leases.renew('acc-1', 'sender-a', 30_000)).toBe('handover');
});
