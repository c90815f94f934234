import { randomUUID } from 'node:crypto';
import { TelegramPeerRepository } from '@metronome/db';
import { createRedis, loadScripts, redisKeys, SocketLeases } from '@metronome/redis';
import {
  gramjsClientFactory,
  keepLearntPeers,
  TelegramUserTransport,
  trustTelegramServerKey,
  UserClientPool,
  type UserClientPoolOptions,
} from '@metronome/transports/telegram-user';
import { seedAccount, seedTenant } from './seed.js';
import { createTestDatabase, REDIS_URL, type TestDatabase, uniquePrefix } from './test-env.js';
import { type AddUserOptions, type DialogSpec, WireTelegram } from './wire-telegram.js';

/** One sender replica's telegram_user side: its own pool (its own GramJS clients) and transport. */
export interface Replica {
  pool: UserClientPool;
  transport: TelegramUserTransport;
  holderId: string;
}

export interface WireAccount {
  /** the Metronome account (a row in PostgreSQL) and how a transport is handed it */
  accountId: string;
  tenantId: string;
  account: { id: string; externalId: string; credentials: { session: string } };
  /** the Telegram user on the fake, its phone and the auth key its session holds */
  userId: string;
  phone: string;
  authKeyId: string;
}

export interface TelegramUserWireKit {
  fake: WireTelegram;
  tdb: TestDatabase;
  leases: SocketLeases;
  /** a sender replica as it starts: GramJS clients of its own, peers in PostgreSQL */
  replica(o?: { timeoutMs?: number; pool?: Partial<UserClientPoolOptions> }): Replica;
  /** a Telegram user signed in on the fake (with `dialogs`), and its Metronome account holding the session */
  account(o?: AddUserOptions & { dialogs?: DialogSpec[] }): Promise<WireAccount>;
  close(): Promise<void>;
}

let nextPhone = 447_800_000_000;

/**
 * The telegram_user transport as the sender builds it — the REAL GramJS client (gramjsClientFactory),
 * its lease in real Redis, its peers in real PostgreSQL — against the FAKE Telegram on the wire
 * (WireTelegram: MTProto over TCP, the server's key trusted as a test data centre's would be).
 */
export async function startTelegramUserWireKit(answerDelayMs = 0): Promise<TelegramUserWireKit> {
  const fake = new WireTelegram(Date.now, answerDelayMs);
  await fake.start();
  trustTelegramServerKey(fake.serverKeyPem);
  const tdb = await createTestDatabase('tgwire');
  const redis = createRedis(REDIS_URL, 'test-tg-wire');
  const leases = new SocketLeases(loadScripts(redis), redisKeys(uniquePrefix('tg-wire')), 2_000);
  const replicas: Replica[] = [];
  return {
    fake,
    tdb,
    leases,
    replica: (o = {}) => {
      const holderId = `test-${randomUUID().slice(0, 8)}`;
      const peers = new TelegramPeerRepository(tdb.db);
      const pool = new UserClientPool({
        makeClient: gramjsClientFactory,
        onPeersLearnt: keepLearntPeers(peers),
        apiId: 1,
        apiHash: 'wire',
        dc: fake.dc(),
        lease: leases,
        holderId,
        leaseTtlMs: 3_000,
        ...o.pool,
      });
      const transport = new TelegramUserTransport({ pool, peers, timeoutMs: o.timeoutMs ?? 5_000 });
      const r = { pool, transport, holderId };
      replicas.push(r);
      return r;
    },
    account: async (o = {}) => {
      const phone = `+${nextPhone++}`;
      const userId = fake.addUser(phone, o);
      if (o.dialogs) fake.setDialogs(userId, o.dialogs);
      const session = await fake.signedInSession(phone);
      const tenantId = await seedTenant(tdb.db);
      const accountId = await seedAccount(tdb.db, tenantId, { platform: 'telegram_user', external_id: userId });
      return { accountId, tenantId, account: { id: accountId, externalId: userId, credentials: { session } }, userId, phone, authKeyId: fake.keyOf(session) };
    },
    close: async () => {
      await Promise.all(replicas.map((r) => r.transport.close().catch(() => undefined)));
      await fake.close();
      redis.disconnect();
      await tdb.drop();
    },
  };
}
