import { randomBytes } from 'node:crypto';
import { systemClock, type Clock } from '@metronome/core';
import { NewChatLimitRepository, WhatsAppAuthRepository } from '@metronome/db';
import { createRedis } from '@metronome/redis';
import type { TransportAccount } from '@metronome/transports';
import { baileysSocketFactory, readLinkedSession, WhatsAppSocketPool, WhatsAppTransport, type WhatsAppSocketPoolOptions } from '@metronome/transports/whatsapp';
import type { Redis } from 'ioredis';
import { createTestDatabase, REDIS_URL, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';
import { credsOnlyBundle } from '../helpers/wire-whatsapp.js';
import { insertWhatsAppAccount, quietLogger, socketLeases } from './whatsapp-setup.js';

/** What a platform file on the wire works with: the real Baileys socket pool and transport, its database, its accounts. */
export interface WirePool {
  pool: WhatsAppSocketPool;
  transport: WhatsAppTransport;
  /** the pool's socket leases (Redis) */
  leases: ReturnType<typeof socketLeases>;
  database: TestDatabase;
  /** a WhatsApp account whose (never connected) device is imported, checked once against the server */
  account(phone: string): Promise<TransportAccount>;
  /** a text part sent to `chatId`, with an idempotency key of its own */
  sendText(account: TransportAccount, chatId: string, text?: string): ReturnType<WhatsAppTransport['send']>;
  /** another replica: a pool and transport of its own on the same database and leases (closed after the file) */
  replica(clock?: Clock): Promise<{ pool: WhatsAppSocketPool; transport: WhatsAppTransport; sendText: WirePool['sendText'] }>;
}

/**
 * The file's prelude for WhatsApp on the wire: a pool of the product's `baileysSocketFactory`
 * connecting to `url` (a wire-level server the file starts in an earlier beforeAll: `settings` is
 * read once it ran), on a database and Redis prefix of its own; all closed after the file. The
 * object is filled in by the beforeAll.
 */
export function wirePoolForFile(label: string, settings: () => { url: string; clock?: Clock } & Partial<WhatsAppSocketPoolOptions>): WirePool {
  const keys = [randomBytes(32)];
  const wire = {} as WirePool;
  let redis: Redis;
  let seq = 0;
  const replicas: WhatsAppTransport[] = [];
  beforeAll(async () => {
    const { url, clock = systemClock, ...options } = settings();
    const database = await createTestDatabase(`wa_${label}`);
    redis = createRedis(REDIS_URL, `test-wa-${label}`);
    const leases = socketLeases(redis, uniquePrefix(`wa-${label}`));
    const poolOn = (holderId: string, clock: Clock) =>
      new WhatsAppSocketPool({
        holderId,
        lease: leases,
        auth: new WhatsAppAuthRepository(database.db),
        newChats: new NewChatLimitRepository(database.db),
        secretsKeys: keys,
        makeSocket: baileysSocketFactory,
        webSocketUrl: url,
        logger: quietLogger,
        queryTimeoutMs: 10_000,
        // no holder to wait out before connecting: a replica takes the account once the other closed
        freshLeaseWaitMs: 0,
        ...options,
        clock,
      });
    const pool = poolOn(`${label}-test`, clock);
    const sendOn =
      (transport: WhatsAppTransport) =>
      (account: TransportAccount, chatId: string, text = `hello ${chatId}`) =>
        transport.send(account, { chatId, part: { type: 'text', text }, partIndex: 0, partCount: 1, idempotencyKey: `${label}:${chatId}:${seq++}` });
    const transport = new WhatsAppTransport({ pool, clock, logger: quietLogger, timeoutMs: 5_000 });
    Object.assign(wire, {
      pool,
      leases,
      database,
      transport,
      account: async (phone: string) => {
        const { accountId } = await insertWhatsAppAccount(database.db);
        const session = readLinkedSession(credsOnlyBundle(phone));
        if (!session.ok) throw new Error(session.message);
        const refused = await pool.importSession(accountId, session.session);
        if (refused) throw new Error(`the wire server refused the device: ${JSON.stringify(refused)}`);
        return { id: accountId, externalId: null, credentials: null };
      },
      sendText: sendOn(transport),
      replica: async (replicaClock: Clock = clock) => {
        const other = poolOn(`${label}-replica-${replicas.length + 1}`, replicaClock);
        const t = new WhatsAppTransport({ pool: other, clock: replicaClock, logger: quietLogger, timeoutMs: 5_000 });
        replicas.push(t);
        return { pool: other, transport: t, sendText: sendOn(t) };
      },
    });
  }, 60_000);
  afterAll(async () => {
    await wire.transport?.close();
    for (const r of replicas) await r.close();
    await redis?.quit();
    await wire.database?.drop();
  }, 30_000);
  return wire;
}
