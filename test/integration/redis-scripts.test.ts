import { AccountLock, AccountPace, createRedis, LeaderLease, loadScripts, redisKeys, SafePace } from '@metronome/redis';
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

describe('pace (GCRA, pace-reserve-3: the script every send goes through)', () => {
  // maxWaitMs 0: a slot is reserved only when it is free now, so each call is "may I send now?"
  const noChat = { chatId: 'c', perMinute: 0 };

  test('burst 1 at 60/min: one send, then one per second, on the caller clock', async () => {
    const { lock, pace } = setup();
    const held = await lock.acquire('acc', 60_000);
    if (!held.held) throw new Error('lock');
    const t0 = 1_000_000;
    expect(await pace.reserve('acc', held.token, t0, 60, 1, noChat, 0)).toEqual({ reserved: true, waitMs: 0 });
    expect(await pace.reserve('acc', held.token, t0, 60, 1, noChat, 0)).toEqual({ reserved: false, limitedBy: 'account', waitMs: 1000 });
    expect(await pace.reserve('acc', held.token, t0 + 999, 60, 1, noChat, 0)).toEqual({ reserved: false, limitedBy: 'account', waitMs: 1 });
    expect(await pace.reserve('acc', held.token, t0 + 1000, 60, 1, noChat, 0)).toEqual({ reserved: true, waitMs: 0 });
  });

  test('burst 3 allows three back to back, then paces', async () => {
    const { lock, pace } = setup();
    const held = await lock.acquire('acc', 60_000);
    if (!held.held) throw new Error('lock');
    const t0 = 5_000_000;
    for (let i = 0; i < 3; i++) expect((await pace.reserve('acc', held.token, t0, 600, 3, noChat, 0)).reserved).toBe(true);
    expect(await pace.reserve('acc', held.token, t0, 600, 3, noChat, 0)).toEqual({ reserved: false, limitedBy: 'account', waitMs: 100 });
  });

  test('in any window of W ms, sends ≤ burst + W / interval (10 simulated minutes of greedy senders reserving ahead)', async () => {
    const { lock, pace } = setup();
    const held = await lock.acquire('acc', 60_000);
    if (!held.held) throw new Error('lock');
    const sends: number[] = [];
    let t = 10_000_000;
    const end = t + 600_000;
    while (t < end) {
      // a sender sends at the time its reservation names; greedy callers reserve up to 1 s ahead
      const r = await pace.reserve('acc', held.token, t, 120, 2, noChat, 1000);
      if (r.reserved) sends.push(t + r.waitMs);
      else t += 'waitMs' in r ? Math.max(1, Math.min(r.waitMs, 137)) : 1;
    }
    sends.sort((a, b) => a - b);
    for (let i = 0, j = 0; i < sends.length; i++) {
      while (sends[i]! - sends[j]! >= 10_000) j++;
      expect(i - j + 1).toBeLessThanOrEqual(2 + 10_000 / 500);
    }
    expect(sends.length).toBeGreaterThanOrEqual(1200);
    expect(sends.length).toBeLessThanOrEqual(1204);
  }, 30_000); // thousands of script calls: more than jest's 5 s default on a loaded machine

  test('a holder that lost the lock cannot reserve', async () => {
    const { lock, pace } = setup();
    const held = await lock.acquire('acc', 60_000);
    if (!held.held) throw new Error('lock');
    await lock.release('acc', held.token);
    const other = await lock.acquire('acc', 60_000);
    expect(other.held).toBe(true);
    expect(await pace.reserve('acc', held.token, 1, 60, 1, noChat, 0)).toEqual({ reserved: false, lockLost: true });
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
    // four slots are taken (t0, +1 s, +2 s, +3 s): at t0 + 3999 the next free one is 1 ms away
    expect(await pace.reserve('acc', held.token, t0 + 3999, 60, 1, noChat, 0)).toEqual({ reserved: false, limitedBy: 'account', waitMs: 1 });
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

describe('safe pace (pace-reserve-safe-6: human gap and caps in the one reservation)', () => {
  const HOUR = 3_600_000;
  // the windows are judged this much wider (pace-reserve-safe-6 WINDOW_MARGIN)
  const MARGIN = 1_000;
  const noChat = { chatId: 'c', perMinute: 0 };
  const none = { gapAfterMs: 0, hourlyCap: 0, dailyCap: 0 };

  async function holder() {
    const { keys, lock, scripts } = setup();
    const safe = new SafePace(scripts, keys);
    const held = await lock.acquire('acc', 60_000);
    if (!held.held) throw new Error('lock');
    return { keys, safe, token: held.token };
  }

  test('asks for a rebuild until the sends are seeded from PostgreSQL, once', async () => {
    const { safe, token } = await holder();
    const t0 = 10 * HOUR;
    expect(await safe.reserve('acc', token, t0, 60_000, 1, noChat, 0, none)).toEqual({ reserved: false, rebuild: true });
    expect(await safe.rebuild('acc', 'not-the-token', t0, 0, [])).toBe(false);
    expect(await safe.rebuild('acc', token, t0, 0, [])).toBe(true);
    expect(await safe.reserve('acc', token, t0, 60_000, 1, noChat, 0, none)).toEqual({ reserved: true, waitMs: 0 });
  });

  test('the gap drawn for one send holds the next back by exactly that much', async () => {
    const { safe, token } = await holder();
    const t0 = 10 * HOUR;
    await safe.rebuild('acc', token, t0, 0, []);
    expect(await safe.reserve('acc', token, t0, 60_000, 1, noChat, 0, { ...none, gapAfterMs: 1_500 })).toEqual({ reserved: true, waitMs: 0 });
    expect(await safe.reserve('acc', token, t0 + 1_000, 60_000, 1, noChat, 0, none)).toEqual({ reserved: false, limitedBy: 'account', waitMs: 500 });
    // reserved ahead when the caller accepts the wait; the next gap counts from that slot
    expect(await safe.reserve('acc', token, t0 + 1_000, 60_000, 1, noChat, 1_000, { ...none, gapAfterMs: 2_000 })).toEqual({ reserved: true, waitMs: 500 });
    expect(await safe.reserve('acc', token, t0 + 1_500, 60_000, 1, noChat, 0, none)).toEqual({ reserved: false, limitedBy: 'account', waitMs: 2_000 });
  });

  test('an hourly cap over a rolling hour: the send after the cap waits until the oldest leaves the window', async () => {
    const { safe, token, keys } = await holder();
    const t0 = 10 * HOUR;
    await safe.rebuild('acc', token, t0, 0, []);
    const capped = { ...none, hourlyCap: 3 };
    for (let i = 0; i < 3; i++) expect(await safe.reserve('acc', token, t0 + i * 1000, 60_000, 1, noChat, 0, capped)).toMatchObject({ reserved: true });
    expect(await safe.reserve('acc', token, t0 + 3_000, 60_000, 1, noChat, 0, capped)).toEqual({
      reserved: false,
      limitedBy: 'cap',
      waitMs: HOUR + MARGIN - 3_000,
    });
    expect(Number(await redis.get(keys.accountCap('acc')))).toBe(t0 + HOUR + MARGIN);
    expect(await safe.reserve('acc', token, t0 + HOUR + MARGIN - 1, 60_000, 1, noChat, 0, capped)).toMatchObject({ limitedBy: 'cap', waitMs: 1 });
    expect(await safe.reserve('acc', token, t0 + HOUR + MARGIN, 60_000, 1, noChat, 0, capped)).toEqual({ reserved: true, waitMs: 0 });
    expect(await safe.reserve('acc', token, t0 + HOUR + MARGIN, 60_000, 1, noChat, 0, capped)).toEqual({ reserved: false, limitedBy: 'cap', waitMs: 1_000 });
  });

  test('a daily cap counts the sends rebuilt from PostgreSQL, and the rebuilt gap holds', async () => {
    const { safe, token } = await holder();
    const t0 = 30 * HOUR;
    // two sends 20 h and 1 h ago; the last one asks the next to wait until t0 + 5 s
    expect(await safe.rebuild('acc', token, t0, t0 + 5_000, [t0 - 20 * HOUR, t0 - HOUR])).toBe(true);
    const capped = { ...none, dailyCap: 3 };
    expect(await safe.reserve('acc', token, t0, 60_000, 1, noChat, 0, capped)).toEqual({ reserved: false, limitedBy: 'account', waitMs: 5_000 });
    expect(await safe.reserve('acc', token, t0 + 5_000, 60_000, 1, noChat, 0, capped)).toEqual({ reserved: true, waitMs: 0 });
    expect(await safe.reserve('acc', token, t0 + 6_000, 60_000, 1, noChat, 0, capped)).toEqual({
      reserved: false,
      limitedBy: 'cap',
      waitMs: 4 * HOUR + MARGIN - 6_000,
    });
    // a second rebuild (another replica's, late) changes nothing
    expect(await safe.rebuild('acc', token, t0, 0, [])).toBe(true);
    expect(await safe.reserve('acc', token, t0 + 6_000, 60_000, 1, noChat, 0, capped)).toMatchObject({ limitedBy: 'cap' });
  });

  test('only the lock holder reserves or rebuilds', async () => {
    const { safe } = await holder();
    expect(await safe.reserve('acc', 'not-the-token', 0, 60, 1, noChat, 0, none)).toEqual({ reserved: false, lockLost: true });
  });
});
