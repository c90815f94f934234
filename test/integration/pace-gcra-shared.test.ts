import { AccountLock, AccountPace, createRedis, loadScripts, redisKeys, type ChatPace } from '@metronome/redis';
import type { Redis } from 'ioredis';
import { REDIS_URL, uniquePrefix } from '../helpers/test-env.js';

// pace-reserve-3 and pace-reserve-safe-6 run one GCRA (lua/include/gcra.lua): with no human gap
// and no caps, the safe script must reserve exactly as the plain one, call for call.

let redis: Redis;
beforeAll(() => {
  redis = createRedis(REDIS_URL, 'test-gcra-shared');
});
afterAll(async () => {
  await redis.quit();
});

const none = { gapAfterMs: 0, hourlyCap: 0, dailyCap: 0 };

test('with no gap and no caps, pace-reserve-safe-6 reserves as pace-reserve-3 does (account and chat paces, waits, limits)', async () => {
  const keys = redisKeys(uniquePrefix('gcra'));
  const scripts = loadScripts(redis);
  const lock = new AccountLock(scripts, keys);
  const pace = new AccountPace(scripts, keys);
  const plain = await lock.acquire('plain', 600_000);
  const safe = await lock.acquire('safe', 600_000);
  if (!plain.held || !safe.held) throw new Error('lock');
  expect(await pace.safe.rebuild('safe', safe.token, 1, 0, [])).toBe(true);

  // a fixed pseudo-random walk: clocks moving unevenly, two rates, bursts, per-chat paces, waits
  let seed = 7;
  const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const chats: ChatPace[] = [
    { chatId: 'a', perMinute: 0 },
    { chatId: 'b', perMinute: 20 },
    { chatId: 'c', perMinute: 7 },
  ];
  let now = 1_000_000;
  const kinds = new Set<string>();
  for (let i = 0; i < 400; i++) {
    now += next(900);
    const perMinute = [60, 43][next(2)]!;
    const burst = 1 + next(3);
    const chat = chats[next(chats.length)]!;
    const maxWaitMs = [0, 500, 2_500][next(3)]!;
    const a = await pace.reserve('plain', plain.token, now, perMinute, burst, chat, maxWaitMs);
    const b = await pace.safe.reserve('safe', safe.token, now, perMinute, burst, chat, maxWaitMs, none);
    expect({ i, reservation: b }).toEqual({ i, reservation: a });
    kinds.add('limitedBy' in a ? a.limitedBy : String(a.reserved));
  }
  // the walk met every answer a reservation can give here
  expect([...kinds].sort()).toEqual(['account', 'chat', 'true']);
});

test('releasing the account lock moves the pace and the human gap: forward only, held or not, and the next reservations wait for them', async () => {
  const keys = redisKeys(uniquePrefix('settle'));
  const scripts = loadScripts(redis);
  const pace = new AccountPace(scripts, keys);
  const lock = new AccountLock(scripts, keys);
  const chat = { chatId: 'c', perMinute: 0 };
  const t0 = 2_000_000;
  const hold = async () => {
    const held = await lock.acquire('acc', 600_000);
    if (!held.held) throw new Error('lock');
    return held.token;
  };

  // a job releases with its floors: the pace (pace-reserve-3's TAT) to t0 + 5 s, the human gap (pace-reserve-safe-6) to t0 + 8 s
  expect(await lock.release('acc', await hold(), { nowMs: t0, paceMs: t0 + 5_000, gapMs: t0 + 8_000 })).toBe(true);
  // a later release, and one whose token no longer holds the lock (Redis lost it), never move them back
  expect(await lock.release('acc', await hold(), { nowMs: t0, paceMs: t0 + 1_000, gapMs: t0 + 6_000 })).toBe(true);
  expect(await lock.release('acc', 'not-the-token', { nowMs: t0, paceMs: t0 + 1_000, gapMs: 0 })).toBe(false);
  expect(Number(await redis.get(keys.accountPace('acc')))).toBe(t0 + 5_000);
  expect(Number(await redis.get(keys.accountGap('acc')))).toBe(t0 + 8_000);

  // a release by a token that lost the lock still moves them forward, and leaves the holder's lock
  const next = await hold();
  expect(await lock.release('acc', 'lost-token', { nowMs: t0, paceMs: t0 + 6_000, gapMs: 0 })).toBe(false);
  expect(Number(await redis.get(keys.accountPace('acc')))).toBe(t0 + 6_000);
  expect(await pace.safe.rebuild('acc', next, t0, 0, [])).toBe(true);
  expect(await pace.reserve('acc', next, t0, 60, 1, chat, 0)).toEqual({ reserved: false, limitedBy: 'account', waitMs: 6_000 });
  expect(await pace.safe.reserve('acc', next, t0, 60, 1, chat, 0, none)).toEqual({ reserved: false, limitedBy: 'account', waitMs: 8_000 });
});

test('pace-reserve-many-3 reserves what as many pace-reserve-3 calls would, one after the other, in one call', async () => {
  const keys = redisKeys(uniquePrefix('many'));
  const scripts = loadScripts(redis);
  const lock = new AccountLock(scripts, keys);
  const pace = new AccountPace(scripts, keys);
  const one = await lock.acquire('one', 600_000);
  const many = await lock.acquire('many', 600_000);
  if (!one.held || !many.held) throw new Error('lock');
  const noChat = { chatId: '', perMinute: 0 };

  let seed = 11;
  const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  let now = 3_000_000;
  const kinds = new Set<string>();
  for (let i = 0; i < 200; i++) {
    now += next(4_000);
    const perMinute = [60, 600, 43][next(3)]!;
    const burst = 1 + next(3);
    const maxWaitMs = [0, 500, 2_500][next(3)]!;
    const count = 1 + next(6);
    // the same requests one at a time on one account, at once on the other
    const waits: number[] = [];
    let refused: unknown = null;
    for (let k = 0; k < count; k++) {
      const r = await pace.reserve('one', one.token, now, perMinute, burst, noChat, maxWaitMs);
      if (!r.reserved) {
        refused = r;
        break;
      }
      waits.push(r.waitMs);
    }
    const batch = await pace.reserveMany('many', many.token, now, perMinute, burst, maxWaitMs, count);
    const expected = waits.length > 0 ? { reserved: true, waitsMs: waits } : refused;
    expect({ i, batch }).toEqual({ i, batch: expected });
    kinds.add(waits.length === 0 ? 'none' : waits.length < count ? 'some' : 'all');
  }
  // the walk met a full batch, a batch cut short by the longest wait, and a refusal
  expect([...kinds].sort()).toEqual(['all', 'none', 'some']);
  // only the holder reserves
  expect(await pace.reserveMany('many', 'not-the-token', now, 60, 1, 0, 3)).toEqual({ reserved: false, lockLost: true });
});
