import { randomBytes, randomUUID } from 'node:crypto';
import { DEVELOPMENT_SECRETS_KEY, type Clock } from '@metronome/core';
import { WhatsAppAuthRepository, type DB } from '@metronome/db';
import { createLogger } from '@metronome/observability';
import { createRedis, loadScripts, redisKeys, SocketLeases, type RedisKeys } from '@metronome/redis';
import {
  loadAuthState,
  WhatsAppSocketPool,
  WhatsAppTransport,
  type WhatsAppAuthStore,
  type WhatsAppSocketPoolOptions,
  type WhatsAppTransportOptions,
} from '@metronome/transports/whatsapp';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { SenderSettings } from '../../services/sender/src/deps.js';
import { FakeWhatsAppNetwork } from '../helpers/fake-whatsapp-socket.js';
import { seedAccount, seedTenant } from '../helpers/seed.js';
import { startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';
import { REDIS_URL, uniquePrefix } from '../helpers/test-env.js';

// Shared by the WhatsApp tests: socket pools on real Redis leases, and accounts whose auth
// state says they were paired (as a finished pairing leaves it).

export const quietLogger = createLogger('whatsapp-test', 'silent');

/** An auth store whose repository is made later (a harness makes its database while building the transports). */
export function lateAuthStore(repository: () => WhatsAppAuthRepository): WhatsAppAuthStore {
  return {
    readCreds: (a) => repository().readCreds(a),
    readKeys: (a, k, ids) => repository().readKeys(a, k, ids),
    readMany: (a, keys) => repository().readMany(a, keys),
    write: (a, rows, now) => repository().write(a, rows, now),
    clear: (a) => repository().clear(a),
    replace: (a, rows, now) => repository().replace(a, rows, now),
    isTransient: (e) => repository().isTransient(e),
  };
}

export function socketLeases(redis: Redis, prefix: string): SocketLeases {
  return new SocketLeases(loadScripts(redis), redisKeys(prefix), 2_000);
}

export function makePool(
  network: FakeWhatsAppNetwork,
  leases: SocketLeases,
  auth: WhatsAppAuthStore,
  secretsKeys: Buffer[],
  clock: Clock,
  extra: Partial<WhatsAppSocketPoolOptions> = {},
): WhatsAppSocketPool {
  return new WhatsAppSocketPool({
    holderId: `test-${randomUUID().slice(0, 8)}`,
    lease: leases,
    auth,
    secretsKeys,
    makeSocket: network.factory,
    clock,
    logger: quietLogger,
    leaseTtlMs: 2_000,
    renewEveryMs: 25,
    connectTimeoutMs: 5_000,
    ...extra,
  });
}

/** Stores credentials of a device the phone already accepted. */
export async function seedPairedAuth(auth: WhatsAppAuthStore, accountId: string, secretsKeys: Buffer[], clock: Clock, phone = '60123456789'): Promise<void> {
  const handle = await loadAuthState(auth, accountId, secretsKeys, clock, { fresh: true });
  Object.assign(handle.state.creds, {
    me: { id: `${phone}:3@s.whatsapp.net`, name: 'Operator' },
    account: { details: randomBytes(32), accountSignatureKey: randomBytes(32), accountSignature: randomBytes(64), deviceSignature: randomBytes(64) },
    registered: true,
  });
  await handle.saveCreds();
}

/** A tenant and a WhatsApp account in the given status. */
export async function insertWhatsAppAccount(db: Kysely<DB>, status: 'active' | 'disconnected' = 'active'): Promise<{ tenantId: string; accountId: string }> {
  const tenantId = await seedTenant(db);
  const accountId = await seedAccount(db, tenantId, { platform: 'whatsapp', name: 'wa', external_id: null, status });
  return { tenantId, accountId };
}

export interface WhatsAppHarness {
  h: SenderHarness;
  network: FakeWhatsAppNetwork;
  pool: WhatsAppSocketPool;
  transport: WhatsAppTransport;
  auth: WhatsAppAuthRepository;
  keys: RedisKeys;
  leases: SocketLeases;
  /** A WhatsApp account of the harness, paired (its auth state stored as a finished pairing leaves it). */
  seedPairedAccount(opts?: { groupConcurrency?: number; maxSendPerMinute?: number }): Promise<{ tenantId: string; accountId: string }>;
  close(): Promise<void>;
}

/**
 * The sender harness with the WhatsApp transport over a FAKE WhatsApp network: the real
 * transport, socket pool, Redis socket lease, PostgreSQL auth state and Baileys media code.
 */
export async function startWhatsAppHarness(
  settings: Partial<SenderSettings> = {},
  transportOptions: Partial<WhatsAppTransportOptions> = {},
  poolOptions: Partial<WhatsAppSocketPoolOptions> = {},
): Promise<WhatsAppHarness> {
  const redis = createRedis(REDIS_URL, 'test-wa-harness');
  const keys = redisKeys(uniquePrefix('wa-send'));
  // The harness makes its database while building the transports: the pool reads the auth
  // state through this store, which reaches the repository once it exists.
  let repo: WhatsAppAuthRepository | null = null;
  const store = lateAuthStore(() => repo!);
  const leases = new SocketLeases(loadScripts(redis), keys);
  let network!: FakeWhatsAppNetwork;
  let pool!: WhatsAppSocketPool;
  let transport!: WhatsAppTransport;
  const h = await startSenderHarness(settings, undefined, {
    transports: (clock) => {
      network = new FakeWhatsAppNetwork(clock);
      pool = makePool(network, leases, store, [DEVELOPMENT_SECRETS_KEY], clock, poolOptions);
      transport = new WhatsAppTransport({ pool, clock, logger: quietLogger, timeoutMs: settings.sendTimeoutMs ?? 5000, ...transportOptions });
      return { whatsapp: transport };
    },
  });
  repo = new WhatsAppAuthRepository(h.tdb.db);
  return {
    h,
    network,
    pool,
    transport,
    auth: repo,
    keys,
    leases,
    seedPairedAccount: async (opts = {}) => {
      const a = await h.seedAccount({ ...opts, platform: 'whatsapp' });
      await seedPairedAuth(repo!, a.accountId, [DEVELOPMENT_SECRETS_KEY], h.clock);
      return { tenantId: a.tenantId, accountId: a.accountId };
    },
    close: async () => {
      await h.close();
      await redis.quit();
    },
  };
}
