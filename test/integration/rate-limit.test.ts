import { createRedis, loadScripts, redisKeys, SharedRateLimit } from '@metronome/redis';
import type { Redis } from 'ioredis';
import { REDIS_URL, uniquePrefix } from '../helpers/test-env.js';

// The control API's per-token limit in Redis (rate-limit-1.lua), shared by every API replica:
// GCRA with a minute's allowance as burst, the clock passed in, on real Redis.

let redis: Redis;
let limit: SharedRateLimit;
beforeAll(() => {
  redis = createRedis(REDIS_URL, 'test-rate-limit');
});
beforeEach(() => {
  limit = new SharedRateLimit(loadScripts(redis), redisKeys(uniquePrefix('rl')));
});
afterAll(async () => {
  await redis.quit();
});

test('a minute’s allowance at once, then one request per 60/limit seconds', async () => {
  const takes = [];
  for (let i = 0; i < 6; i++) takes.push(await limit.take('t', 0, 6));
  expect(takes).toEqual([0, 0, 0, 0, 0, 0]);
  expect(await limit.take('t', 0, 6)).toBe(10_000);
  expect(await limit.take('t', 9_999, 6)).toBe(1);
  expect(await limit.take('t', 10_000, 6)).toBe(0);
  expect(await limit.take('t', 10_000, 6)).toBe(10_000);
});

test('never more than limit + elapsed·rate across any window boundary (unlike a fixed window)', async () => {
  let granted = 0;
  // Hammer it every 100 ms for two minutes: a fixed window would allow 120 around the edge.
  for (let t = 0; t <= 120_000; t += 100) {
    while ((await limit.take('t', t, 60)) === 0) granted++;
  }
  expect(granted).toBe(60 + 120);
});

test('keys are independent, and refusals do not spend the allowance', async () => {
  expect(await limit.take('a', 0, 1)).toBe(0);
  expect(await limit.take('a', 0, 1)).toBe(60_000);
  expect(await limit.take('a', 0, 1)).toBe(60_000);
  expect(await limit.take('b', 0, 1)).toBe(0);
  expect(await limit.take('a', 60_000, 1)).toBe(0);
});

test('two replicas share one allowance', async () => {
  const prefix = uniquePrefix('rl-shared');
  const other = createRedis(REDIS_URL, 'test-rate-limit-2');
  try {
    const one = new SharedRateLimit(loadScripts(redis), redisKeys(prefix));
    const two = new SharedRateLimit(loadScripts(other), redisKeys(prefix));
    const answers = [await one.take('t', 0, 4), await two.take('t', 0, 4), await one.take('t', 0, 4), await two.take('t', 0, 4), await two.take('t', 0, 4)];
    expect(answers).toEqual([0, 0, 0, 0, 15_000]);
  } finally {
    await other.quit();
  }
});

test('a key whose allowance is full again expires from Redis by itself', async () => {
  const prefix = uniquePrefix('rl-ttl');
  const own = new SharedRateLimit(loadScripts(redis), redisKeys(prefix));
  await own.take('t', Date.now(), 60);
  const ttl = await redis.pttl(redisKeys(prefix).rateLimit('t'));
  // one interval (1 s at 60 a minute): then the key means the same as no key
  expect(ttl).toBeGreaterThan(0);
  expect(ttl).toBeLessThanOrEqual(1_000);
});

// rate-limit-2.lua: the API's two authentication limits (an address's failures, a token's
// requests) taken in one call, from both or from neither.
describe('two limits at once', () => {
  const failures = (spend: boolean) => ({ key: 'address', perMinute: 2, spend });
  const token = { key: 'token', perMinute: 3 };

  test('both spent when both allow; a refusal names its limit and spends nothing', async () => {
    expect(await limit.takeBoth(failures(true), token, 0)).toBeNull();
    expect(await limit.takeBoth(failures(true), token, 0)).toBeNull();
    // the address's two failures are spent: refused by the first, the token's third untouched
    expect(await limit.takeBoth(failures(true), token, 0)).toEqual({ limit: 'first', waitMs: 30_000 });
    expect(await limit.takeBoth(failures(false), token, 0)).toEqual({ limit: 'first', waitMs: 30_000 });
    expect(await limit.take('token', 0, 3)).toBe(0);
    expect(await limit.take('token', 0, 3)).toBe(20_000);
  });

  test('checking the first without spending it: only the second is spent', async () => {
    for (let i = 0; i < 3; i++) expect(await limit.takeBoth(failures(false), token, 0)).toBeNull();
    expect(await limit.takeBoth(failures(false), token, 0)).toEqual({ limit: 'second', waitMs: 20_000 });
    // the refusal by the second spent nothing of the first either
    expect(await limit.take('address', 0, 2)).toBe(0);
    expect(await limit.take('address', 0, 2)).toBe(0);
    expect(await limit.take('address', 0, 2)).toBe(30_000);
  });
});
