import { AccountLock, AccountPace, CHAT_SENDS_KEEP_MS, createRedis, loadScripts, redisKeys, type ChatSend } from '@metronome/redis';
import type { Redis } from 'ioredis';
import { REDIS_URL, uniquePrefix } from '../helpers/test-env.js';

// The chat windows (lua/chat-limits-*): what one chat gets from an account across its runs,
// reserved with the chat, and rebuilt from PostgreSQL's record after Redis lost it.

let redis: Redis;
beforeAll(() => {
  redis = createRedis(REDIS_URL, 'test-chat-limits');
});
afterAll(async () => {
  await redis.quit();
});

const DAY = 86_400_000;
const T0 = 10 * DAY;
const windows = [
  { key: 'per_day', count: 2, windowMs: DAY },
  { key: 'per_week', count: 3, windowMs: 7 * DAY },
];

async function setUp(label: string) {
  const prefix = uniquePrefix(label);
  const keys = redisKeys(prefix);
  const scripts = loadScripts(redis);
  const lock = await new AccountLock(scripts, keys).acquire('acc', 600_000);
  if (!lock.held) throw new Error('lock');
  const loads: Date[] = [];
  const record: ChatSend[] = [];
  const load = async (since: Date) => {
    loads.push(since);
    return record.filter((s) => s.at >= since.getTime());
  };
  return { prefix, keys, pace: new AccountPace(scripts, keys), token: lock.token, loads, record, load };
}

test("a chat gets at most each window's count, whichever run sends; a run's message counts once; the window frees at its oldest message's end", async () => {
  const h = await setUp('chat-windows');
  const reserve = (at: number, chat: string, run: string) => h.pace.chats.reserve('acc', h.token, at, chat, run, windows, h.load);
  expect(await reserve(T0, 'c1', 'run-1')).toEqual({ reserved: true });
  // the first ask rebuilt from the (empty) record, once
  expect(h.loads).toEqual([new Date(T0 - CHAT_SENDS_KEEP_MS)]);
  expect(await reserve(T0 + 1_000, 'c1', 'run-1')).toEqual({ reserved: true });
  expect(await reserve(T0 + 2_000, 'c1', 'run-2')).toEqual({ reserved: true });
  expect(await reserve(T0 + 3_000, 'c1', 'run-3')).toEqual({ reserved: false, limitedBy: 'per_day', waitMs: DAY - 3_000 });
  // another chat is not held
  expect(await reserve(T0 + 3_000, 'c2', 'run-3')).toEqual({ reserved: true });
  // a day later the day frees; the week is full at its third
  expect(await reserve(T0 + DAY + 1, 'c1', 'run-3')).toEqual({ reserved: true });
  expect(await reserve(T0 + DAY + 2, 'c1', 'run-4')).toMatchObject({ reserved: false, limitedBy: 'per_day' });
  expect(await reserve(T0 + DAY + 2_001, 'c1', 'run-4')).toEqual({ reserved: false, limitedBy: 'per_week', waitMs: 6 * DAY - 2_001 });
  expect(h.loads).toHaveLength(1);
  // only the lock's holder reserves
  expect(await h.pace.chats.reserve('acc', 'not-the-token', T0 + 2 * DAY, 'c9', 'run-9', windows, h.load)).toEqual({ reserved: false, lockLost: true });
});

test("after Redis lost the chats' sends, they are rebuilt from the record before any reservation: the cap still holds", async () => {
  const h = await setUp('chat-rebuild');
  h.record.push(
    { chatId: 'c1', runId: 'run-1', at: T0 - 5_000 },
    { chatId: 'c1', runId: 'run-2', at: T0 - 4_000 },
    { chatId: 'c2', runId: 'run-2', at: T0 - 4_000 },
  );
  // nothing in Redis: the record is read, then the chat is held by the day's two messages
  expect(await h.pace.chats.reserve('acc', h.token, T0, 'c1', 'run-3', windows, h.load)).toEqual({
    reserved: false,
    limitedBy: 'per_day',
    waitMs: DAY - 5_000,
  });
  // a run already recorded counts once, not again
  expect(await h.pace.chats.reserve('acc', h.token, T0, 'c2', 'run-2', windows, h.load)).toEqual({ reserved: true });
  expect(await h.pace.chats.reserve('acc', h.token, T0, 'c2', 'run-3', windows, h.load)).toEqual({ reserved: true });
  expect(h.loads).toHaveLength(1);
  // a flush of this prefix's keys (the lock taken again): rebuilt again, the cap kept
  const keys = await redis.keys(`${h.prefix}:*`);
  await redis.del(...keys);
  const again = await new AccountLock(loadScripts(redis), h.keys).acquire('acc', 600_000);
  if (!again.held) throw new Error('lock');
  h.record.push({ chatId: 'c2', runId: 'run-3', at: T0 });
  expect(await h.pace.chats.reserve('acc', again.token, T0 + 1, 'c2', 'run-4', windows, h.load)).toEqual({
    reserved: false,
    limitedBy: 'per_day',
    waitMs: DAY - 4_001,
  });
  expect(h.loads).toHaveLength(2);
});
