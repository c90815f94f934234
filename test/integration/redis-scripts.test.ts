import { AccountLock, AccountPace, createRedis, LeaderLease, loadScripts, redisKeys } from '@metronome/redis';
import type { Redis } from 'ioredis';
import { REDIS_URL, uniquePrefix } from '../helpers/test-env.js';

let redis: Redis;
beforeAll(() => {
  redis = createRedis(REDIS_URL, 'test-scripts');
});
afterAll(async () => {
  await redis.quit();
});

function setup() {
  const keys = redisKeys(uniquePrefix('lua'));
  const scripts = loadScripts(redis);
  return { keys, lock: new AccountLock(scripts, keys), pace: new AccountPace(scripts, keys), scripts };
}

describe('account lock', () => {
  test('one holder at a time; only the holder extends or releases', async () => {
    const { lock } = setup();
    const first = await lock.acquire('acc', 10_000);
    expect(first.held).toBe(true);
    const second = await lock.acquire('acc', 10_000);
    expect(second.held).toBe(false);
    if (second.held || !first.held) throw new Error('unreachable');
    expect(second.retryInMs).toBeGreaterThan(9_000);
    expect(await lock.extend('acc', 'not-the-token', 10_000)).toBe(false);
    expect(await lock.release('acc', 'not-the-token')).toBe(false);
    expect(await lock.extend('acc', first.token, 10_000)).toBe(true);
    expect(await lock.release('acc', first.token)).toBe(true);
    expect((await lock.acquire('acc', 10_000)).held).toBe(true);
  });

  test('scripts survive SCRIPT FLUSH (EVALSHA falls back to EVAL)', async () => {
    const { lock } = setup();
    await redis.script('FLUSH');
    expect((await lock.acquire('acc2', 1000)).held).toBe(true);
  });
});

describe('pace (GCRA)', () => {
  test('burst 1 at 60/min: one send, then one per second, on the caller clock', async () => {
    const { lock, pace } = setup();
    const held = await lock.acquire('acc', 60_000);
    if (!held.held) throw new Error('lock');
    const t0 = 1_000_000;
    expect(await pace.take('acc', held.token, t0, 60, 1)).toEqual({ granted: true });
    expect(await pace.take('acc', held.token, t0, 60, 1)).toEqual({ granted: false, waitMs: 1000 });
    expect(await pace.take('acc', held.token, t0 + 999, 60, 1)).toEqual({ granted: false, waitMs: 1 });
    expect(await pace.take('acc', held.token, t0 + 1000, 60, 1)).toEqual({ granted: true });
  });

  test('burst 3 allows three back to back, then paces', async () => {
    const { lock, pace } = setup();
    const held = await lock.acquire('acc', 60_000);
    if (!held.held) throw new Error('lock');
    const t0 = 5_000_000;
    for (let i = 0; i < 3; i++) expect((await pace.take('acc', held.token, t0, 600, 3)).granted).toBe(true);
    expect(await pace.take('acc', held.token, t0, 600, 3)).toEqual({ granted: false, waitMs: 100 });
  });

  test('in any window of W ms, sends ≤ burst + W / interval (simulated 10 minutes of greedy senders)', async () => {
    const { lock, pace } = setup();
    const held = await lock.acquire('acc', 60_000);
    if (!held.held) throw new Error('lock');
    const granted: number[] = [];
    let t = 10_000_000;
    const end = t + 600_000;
    while (t < end) {
      const r = await pace.take('acc', held.token, t, 120, 2);
      if (r.granted) granted.push(t);
      t += r.granted ? 0 : 'waitMs' in r ? Math.min(r.waitMs, 137) : 1;
    }
    for (let i = 0, j = 0; i < granted.length; i++) {
      while (granted[i]! - granted[j]! >= 10_000) j++;
      expect(i - j + 1).toBeLessThanOrEqual(2 + (10_000 / 500));
    }
    expect(granted.length).toBeGreaterThanOrEqual(1200);
    expect(granted.length).toBeLessThanOrEqual(1202);
  });

  test('a holder that lost the lock cannot take a token', async () => {
    const { lock, pace } = setup();
    const held = await lock.acquire('acc', 60_000);
    if (!held.held) throw new Error('lock');
    await lock.release('acc', held.token);
    const other = await lock.acquire('acc', 60_000);
    expect(other.held).toBe(true);
    expect(await pace.take('acc', held.token, 1, 60, 1)).toEqual({ granted: false, lockLost: true });
  });
});

describe('leader lease', () => {
  test('one leader; a standby takes over once it is dropped', async () => {
    const { scripts, keys } = setup();
    const a = new LeaderLease(scripts, keys, 'a');
    const b = new LeaderLease(scripts, keys, 'b');
    expect(await a.hold(10_000)).toBe('taken');
    expect(await b.hold(10_000)).toBe('lost');
    expect(await a.hold(10_000)).toBe('held');
    await a.drop();
    expect(await b.hold(10_000)).toBe('taken');
    expect(await a.hold(10_000)).toBe('lost');
  });
});

describe('pace reservation (pace-reserve-3)', () => {
  const noChat = { chatId: 'c', perMinute: 0 };

  test('reserves consecutive slots ahead up to the longest accepted wait, then names the account as the limit', async () => {
    const { lock, pace } = setup();
    const held = await lock.acquire('acc', 60_000);
    if (!held.held) throw new Error('lock');
    const t0 = 1_000_000;
    expect(await pace.reserve('acc', held.token, t0, 60, 1, noChat, 2500)).toEqual({ reserved: true, waitMs: 0 });
    expect(await pace.reserve('acc', held.token, t0, 60, 1, noChat, 2500)).toEqual({ reserved: true, waitMs: 1000 });
    expect(await pace.reserve('acc', held.token, t0, 60, 1, noChat, 2500)).toEqual({ reserved: true, waitMs: 2000 });
    // the next slot is 3 s away: more than accepted, nothing reserved
    expect(await pace.reserve('acc', held.token, t0, 60, 1, noChat, 2500)).toEqual({ reserved: false, limitedBy: 'account', waitMs: 3000 });
    expect(await pace.reserve('acc', held.token, t0 + 500, 60, 1, noChat, 2500)).toEqual({ reserved: true, waitMs: 2500 });
    // the reservations are the same shared state the take script reads
    expect(await pace.take('acc', held.token, t0 + 3999, 60, 1)).toEqual({ granted: false, waitMs: 1 });
  });

  test('a per-chat pace spaces one chat without slowing another', async () => {
    const { lock, pace } = setup();
    const held = await lock.acquire('acc', 60_000);
    if (!held.held) throw new Error('lock');
    const t0 = 2_000_000;
    const a = { chatId: 'group-a', perMinute: 20 };
    const b = { chatId: 'group-b', perMinute: 20 };
    expect(await pace.reserve('acc', held.token, t0, 60_000, 1, a, 0)).toEqual({ reserved: true, waitMs: 0 });
    expect(await pace.reserve('acc', held.token, t0 + 1, 60_000, 1, b, 0)).toEqual({ reserved: true, waitMs: 0 });
    expect(await pace.reserve('acc', held.token, t0 + 2, 60_000, 1, a, 100)).toEqual({ reserved: false, limitedBy: 'chat', waitMs: 2998 });
    expect(await pace.reserve('acc', held.token, t0 + 2, 60_000, 1, a, 5000)).toEqual({ reserved: true, waitMs: 2998 });
    expect(await pace.reserve('acc', held.token, t0 + 3000, 60_000, 1, a, 0)).toEqual({ reserved: false, limitedBy: 'chat', waitMs: 3000 });
  });

  test('only the lock holder reserves', async () => {
    const { lock, pace } = setup();
    const held = await lock.acquire('acc', 60_000);
    if (!held.held) throw new Error('lock');
    expect(await pace.reserve('acc', 'stale-token', 3_000_000, 60, 1, noChat, 1000)).toEqual({ reserved: false, lockLost: true });
    expect(await pace.reserve('acc', held.token, 3_000_000, 60, 1, noChat, 1000)).toEqual({ reserved: true, waitMs: 0 });
  });
});
