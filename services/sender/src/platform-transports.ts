// WhatsApp (Baileys) and Telegram user accounts (GramJS), built on first use: a replica that never sends for such an
// account never loads their libraries (half a second of CPU each at start).
import { systemClock } from '@metronome/core';
import type { accountProxies, ChatDirectoryRepository, WhatsAppSentMessageRepository } from '@metronome/db';
import { NewChatLimitRepository, TelegramPeerRepository, WhatsAppAuthRepository } from '@metronome/db';
import { countRedisCommands, type Logger, type Metrics } from '@metronome/observability';
import { closeRedis, createRedis, DeviceLists, SocketLeases, type ConnectRate, type RedisKeys, type ScriptCommands } from '@metronome/redis';
import { onFirstUse, TELEGRAM_USER_SHAPE, transportOnFirstUse, WHATSAPP_SHAPE, type Transport } from '@metronome/transports';
import type { IncomingText, MessageReceipt, MessageRefusal } from '@metronome/transports/whatsapp';
import type { Kysely } from 'kysely';
import type { DB } from '@metronome/db';
import type { SenderConfig } from './config.js';
import type { HeldConnections } from './account-holder.js';
import { countSockets } from './socket-metrics.js';

/** Accounts' proxies: read when a connection opens, and where each stands told to the account. */
type Proxies = ReturnType<typeof accountProxies>;

export interface WhatsAppDeps {
  holderId: string;
  connectRate: ConnectRate;
  proxies: Proxies;
  config: SenderConfig;
  db: Kysely<DB>;
  scripts: ScriptCommands;
  keys: RedisKeys;
  secretsKeys: Buffer[];
  logger: Logger;
  metrics: Metrics;
  directory: ChatDirectoryRepository;
  sentMessages: WhatsAppSentMessageRepository;
  resendKeepMs: number;
  /** a reply on a socket this replica holds */
  onIncomingText(accountId: string, message: IncomingText): void;
  /** a message refused after the write */
  onMessageRefused(refusal: MessageRefusal): void;
  onReceipt(receipt: MessageReceipt): void;
}

/** A platform's transport, and its connections for the account holder (account-holder.ts); both load the library on first use. */
export interface OnFirstUse {
  transport: Transport;
  connections: HeldConnections;
  close(): Promise<void>;
}

/** WhatsApp: one socket per account across replicas (Redis lease), auth state sealed in PostgreSQL. */
export function whatsappOnFirstUse(d: WhatsAppDeps): OnFirstUse {
  const built = onFirstUse(async () => {
    const { baileysSocketFactory, resolveWhatsAppVersion, UserDevices, WhatsAppSocketPool, WhatsAppTransport } = await import('@metronome/transports/whatsapp');
    const logger = d.logger.child({ component: 'whatsapp' });
    const version = await resolveWhatsAppVersion({
      configured: d.config.WHATSAPP_VERSION,
      fetchLatest: d.config.WHATSAPP_FETCH_VERSION,
      proxy: d.config.WHATSAPP_VERSION_PROXY,
      logger,
    });
    const devicesRedis = createRedis(d.config.REDIS, 'metronome-sender-devices', {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
    });
    devicesRedis.on('error', () => undefined);
    countRedisCommands(devicesRedis, () => d.metrics.redisCommands.inc({ connection: 'devices' }));
    const pool = new WhatsAppSocketPool({
      ...d.proxies,
      ...(version.version && { version: version.version }),
      ...(d.config.WHATSAPP_WS_URL && { webSocketUrl: d.config.WHATSAPP_WS_URL }),
      ...(d.config.WHATSAPP_UPLOAD_HOST && { uploadHost: d.config.WHATSAPP_UPLOAD_HOST }),
      holderId: d.holderId,
      lease: new SocketLeases(d.scripts, d.keys),
      leaseTtlMs: d.config.SENDER_HOLD_MS,
      connectPace: d.connectRate,
      auth: new WhatsAppAuthRepository(d.db),
      newChats: new NewChatLimitRepository(d.db),
      onNewChatsHeld: (_accountId, code) => d.metrics.newChatsHeld.inc({ reason: code }),
      secretsKeys: d.secretsKeys,
      makeSocket: baileysSocketFactory,
      onSocket: countSockets(d.metrics, 'whatsapp'),
      onIncomingText: d.onIncomingText,
      onMessageRefused: d.onMessageRefused,
      onReceipt: d.onReceipt,
      directory: d.directory,
      sentMessages: d.sentMessages,
      resendKeepMs: d.resendKeepMs,
      userDevices: new UserDevices({ store: new DeviceLists(devicesRedis, d.keys), clock: systemClock, logger }),
      clock: systemClock,
      // Baileys logs every frame below warn
      logger: d.logger.child({ component: 'whatsapp' }, { level: ['error', 'fatal', 'silent'].includes(d.config.LOG_LEVEL) ? d.config.LOG_LEVEL : 'warn' }),
    });
    return { pool, devicesRedis, transport: new WhatsAppTransport({ pool, clock: systemClock, logger, timeoutMs: d.config.SEND_TIMEOUT_MS }) };
  });
  return {
    transport: transportOnFirstUse(WHATSAPP_SHAPE, async () => (await built.get()).transport),
    close: async () => {
      const loaded = await built.loaded()?.catch(() => null);
      await loaded?.transport.close();
      if (loaded) await closeRedis(loaded.devicesRedis);
    },
    connections: {
      platform: 'whatsapp',
      held: async () => (await built.loaded())?.pool.heldAccounts() ?? [],
      hold: async (account) => {
        const { pool } = await built.get();
        // a holder takes free accounts only: it never asks the account's holder to hand it over
        return !(await pool.heldElsewhere(account.id)) && (await pool.use(account.id, async () => undefined, account.proxy, false)).ok;
      },
      letGo: async (accountId, handOver) => (await built.loaded())?.transport.letGo(accountId, handOver) ?? false,
      turns: async ({ holdersOpen, leftToOthers }) => {
        const turns = (await built.loaded())?.pool.turns;
        turns?.holdersOpen(holdersOpen);
        return turns?.withdraw(leftToOthers) ?? 0;
      },
    },
  };
}

/** Telegram user accounts: one MTProto connection per account across replicas (the same Redis lease). */
export function telegramUserOnFirstUse(d: {
  holderId: string;
  config: SenderConfig;
  db: Kysely<DB>;
  scripts: ScriptCommands;
  keys: RedisKeys;
  proxies: Proxies;
  /** a person's private text on a connection this replica holds (opt-outs, replies), as WhatsApp's */
  onIncomingText?(accountId: string, message: IncomingText): void;
}): OnFirstUse {
  const built = onFirstUse(async () => {
    const { configureTelegramEndpoint, keepLearntPeers, loadUserClientFactory, TelegramUserTransport, UserClientPool, withKeptUsername } = await import(
      '@metronome/transports/telegram-user'
    );
    const onText = d.onIncomingText;
    // peers (access hashes) in PostgreSQL: any replica addresses any chat after any restart
    const peers = new TelegramPeerRepository(d.db);
    const pool = new UserClientPool({
      dc: configureTelegramEndpoint(d.config),
      onPeersLearnt: keepLearntPeers(peers),
      onIncomingText: onText && ((accountId, message) => onText(accountId, withKeptUsername(accountId, message, peers))),
      makeClient: await loadUserClientFactory(d.config.TELEGRAM_USER_CLIENT_MODULE),
      apiId: d.config.TELEGRAM_API_ID,
      apiHash: d.config.TELEGRAM_API_HASH,
      lease: new SocketLeases(d.scripts, d.keys),
      holderId: d.holderId,
      reportProxy: d.proxies.reportProxy,
    });
    return { pool, transport: new TelegramUserTransport({ pool, clock: systemClock, peers, timeoutMs: d.config.SEND_TIMEOUT_MS }) };
  });
  return {
    transport: transportOnFirstUse(TELEGRAM_USER_SHAPE, async () => (await built.get()).transport),
    close: async () => (await built.loaded()?.catch(() => null))?.transport.close(),
    connections: {
      platform: 'telegram_user',
      // a client used within a send's timeout may carry a send: it is not let go
      held: async () => (await built.loaded())?.pool.heldAccounts(d.config.SEND_TIMEOUT_MS * 2) ?? [],
      hold: async (account) => (await built.get()).transport.hold(account),
      letGo: async (accountId) => {
        const pool = (await built.loaded())?.pool;
        await pool?.drop(accountId);
        return pool !== undefined;
      },
    },
  };
}
