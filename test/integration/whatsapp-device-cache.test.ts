import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { systemClock } from '@metronome/core';
import { createRedis, DeviceLists, redisKeys } from '@metronome/redis';
import type { TransportAccount } from '@metronome/transports';
import { UserDevices } from '@metronome/transports/whatsapp';
import { startWhatsAppServer } from '@openclaw/crabline';
import type { Redis } from 'ioredis';
import { wirePoolForFile, type WirePool } from '../platforms/wire-setup.js';
import { eventually, REDIS_URL, uniquePrefix } from '../helpers/test-env.js';
import { flushPrefix } from '../helpers/redis-flush.js';

// Recipients' device lists outlive the socket (UserDevices, passed to Baileys as its
// `userDevicesCache`): the real Baileys sends to @openclaw/crabline's WhatsApp Web server (a fake
// platform nobody here wrote), which counts the queries it is asked. Without the cache each new
// socket asks again for each chat: a USync device query and, as the server answers with LIDs, a
// forced pre-key fetch (Baileys' getUSyncDevices, assertSessions(lids, true)).

const CHATS = ['60125000101', '60125000102', '60125000103', '60125000104'];

type Node = { tag?: string; attrs?: Record<string, string>; content?: unknown };
const kids = (n: Node | undefined): Node[] => (Array.isArray(n?.content) ? (n.content as Node[]) : []);
const child = (n: Node | undefined, tag: string) => kids(n).find((c) => c.tag === tag);

/** What the server was asked while a round ran: USync queries with `<devices>`, key fetches, and the JIDs each named. */
interface Asked {
  deviceQueries: number;
  devicesOf: string[];
  keyFetches: number;
  keysOf: string[];
}
const rounds: Asked[] = [];
const newRound = (): Asked => {
  const round = { deviceQueries: 0, devicesOf: [], keyFetches: 0, keysOf: [] };
  rounds.push(round);
  return round;
};

function count(node: Node): void {
  const round = rounds.at(-1);
  if (!round || node.tag !== 'iq') return;
  const usync = child(node, 'usync');
  if (node.attrs?.['xmlns'] === 'usync' && child(child(usync, 'query'), 'devices')) {
    round.deviceQueries++;
    round.devicesOf.push(...kids(child(usync, 'list')).map((u) => u.attrs?.['jid'] ?? '?'));
  }
  const key = child(node, 'key');
  if (node.attrs?.['xmlns'] === 'encrypt' && node.attrs['type'] === 'get' && key) {
    round.keyFetches++;
    round.keysOf.push(...kids(key).map((u) => u.attrs?.['jid'] ?? '?'));
  }
}

let server: { url: string; accepted: string[]; close(): Promise<void> };
beforeAll(async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'wa-devices-'));
  const accepted: string[] = [];
  const crabline = await startWhatsAppServer({
    recorderPath: path.join(dir, 'whatsapp.jsonl'),
    onEvent: (e: { accepted?: boolean; body?: unknown }) => {
      const body = e.body as { message?: { conversation?: string } } & Node;
      if (e.accepted && body?.message?.conversation) accepted.push(body.message.conversation);
      else if (!e.accepted && body) count(body);
    },
  });
  server = {
    url: crabline.manifest.endpoints.baileysWebSocketUrl,
    accepted,
    close: async () => {
      await crabline.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
afterAll(async () => {
  await server?.close();
});

// Each replica is a process with its own memory: the pools ask `devices` as it is when a socket opens.
const prefix = uniquePrefix('wa-devices');
let redis: Redis;
let devices: UserDevices;
const warnings: unknown[] = [];
const userDevices = (store: DeviceLists) => new UserDevices({ store, clock: systemClock, logger: { warn: (o: unknown) => warnings.push(o) } as never });
beforeAll(() => {
  redis = createRedis(REDIS_URL, 'test-wa-devices');
  devices = userDevices(new DeviceLists(redis, redisKeys(prefix)));
});
const wire = wirePoolForFile('device_cache', () => ({ url: server.url, userDevices: { forAccount: (accountId) => devices.forAccount(accountId) } }));
afterAll(async () => {
  await redis?.quit();
  // this file's keys only
  await flushPrefix(prefix);
});

async function sendRound(send: WirePool['sendText'], account: TransportAccount, label: string): Promise<Asked> {
  const round = newRound();
  for (const chat of CHATS) expect(await send(account, chat, `${label} to ${chat}`)).toMatchObject({ kind: 'delivered' });
  await eventually(`the server to take the ${label} round`, async () => CHATS.every((chat) => server.accepted.includes(`${label} to ${chat}`)), 10_000, 20);
  return round;
}

test('after a reconnect and after a hand-over to another replica, the same chats cost WhatsApp no device query and no key fetch; with Redis gone, Baileys asks again', async () => {
  const account = await wire.account('601250000');
  const first = await sendRound(wire.sendText, account, 'first');
  // every chat was asked for, and its keys fetched (the count is what the cache saves a recovery)
  expect(first.deviceQueries).toBeGreaterThanOrEqual(CHATS.length);
  for (const chat of CHATS) expect(first.devicesOf.some((jid) => jid.startsWith(chat))).toBe(true);
  expect(first.keyFetches).toBeGreaterThanOrEqual(CHATS.length);
  // each chat's list is in Redis, under the account
  expect(await redis.exists(...CHATS.map((chat) => redisKeys(prefix).userDevices(account.id, chat)))).toBe(CHATS.length);

  // A reconnect: the socket closes (as idle, not handed on: this pool may open it again at once), the next send opens a new one.
  expect(await wire.pool.letGo(account.id, false)).toBe(true);
  const reconnected = await sendRound(wire.sendText, account, 'reconnected');

  // A hand-over: another replica, with nothing in its memory, takes the account (the same Redis).
  expect(await wire.pool.letGo(account.id, false)).toBe(true);
  devices = userDevices(new DeviceLists(redis, redisKeys(prefix)));
  const other = await wire.replica();
  const handedOver = await sendRound(other.sendText, account, 'handed over');

  // Redis unreachable (its connection closed): each read is a miss, the sends go on as without the cache.
  const gone = createRedis(REDIS_URL, 'test-wa-devices-gone');
  await gone.quit();
  devices = userDevices(new DeviceLists(gone, redisKeys(prefix)));
  expect(await other.pool.letGo(account.id, false)).toBe(true);
  const redisGone = await sendRound(wire.sendText, account, 'redis gone');

  // what names one of the chats (by number: crabline's LIDs carry the phone number's digits)
  const ofChats = (jids: string[]) => jids.filter((jid) => CHATS.some((chat) => jid.startsWith(chat)));
  const figures = (r: Asked) => ({ deviceQueries: r.deviceQueries, chatsQueried: ofChats(r.devicesOf), chatKeysFetched: ofChats(r.keysOf) });
  const line = (label: string, r: Asked) =>
    `${label} ${r.deviceQueries} / ${r.keyFetches} (${ofChats(r.keysOf).length} of the chats' keys${r.keysOf.length > ofChats(r.keysOf).length ? `; also ${r.keysOf.filter((j) => !ofChats([j]).length).join(', ')}` : ''})`;
  console.log(
    `USync device queries / key fetches for ${CHATS.length} chats: ${[
      line('first', first),
      line('reconnected', reconnected),
      line('handed over', handedOver),
      line('redis gone', redisGone),
    ].join('; ')}`,
  );
  expect({ reconnected: figures(reconnected), handedOver: figures(handedOver) }).toEqual({
    reconnected: { deviceQueries: 0, chatsQueried: [], chatKeysFetched: [] },
    handedOver: { deviceQueries: 0, chatsQueried: [], chatKeysFetched: [] },
  });
  // crabline names the account's LID two ways (its handshake: 15550000000@lid; its USync: the number's
  // digits), so the account's own phone may need one session once; never more
  expect(reconnected.keyFetches + handedOver.keyFetches).toBeLessThanOrEqual(1);
  expect(redisGone.deviceQueries).toBeGreaterThanOrEqual(CHATS.length);
  // said at warn once, not once per send
  expect(warnings).toHaveLength(1);
}, 120_000);
