// Built on first use: an API that never pairs or signs in never loads Baileys or GramJS.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { systemClock } from '@metronome/core';
import { AccountRepository, accountProxies, NewChatLimitRepository, WhatsAppAuthRepository, type DB } from '@metronome/db';
import type { Logger } from '@metronome/observability';
import { loadScripts, redisKeys, SocketLeases, type RedisClient } from '@metronome/redis';
import { onFirstUse } from '@metronome/transports';
import type { WhatsAppSocket, WhatsAppSocketPool } from '@metronome/transports/whatsapp';
import type { Kysely } from 'kysely';
import type { ApiConfig } from './config.js';
import type { SessionImport, TelegramSignIn, WhatsAppPairing } from './context.js';

export function whatsappOnFirstUse(config: ApiConfig, db: Kysely<DB>, redis: RedisClient, logger: Logger) {
  const pool = onFirstUse(async (): Promise<WhatsAppSocketPool> => {
    const { baileysSocketFactory, resolveWhatsAppVersion, WhatsAppSocketPool } = await import('@metronome/transports/whatsapp');
    const version = await resolveWhatsAppVersion({
      configured: config.whatsappVersion?.configured ?? null,
      fetchLatest: config.whatsappVersion?.fetchLatest ?? false,
      proxy: config.whatsappVersion?.proxy ?? null,
      logger: logger.child({ component: 'whatsapp' }),
    });
    const secretsKeys = [config.secretsKey, ...(config.secretsKeyPrevious ? [config.secretsKeyPrevious] : [])];
    // Pairing sockets hold the same per-account lease as the senders' sockets.
    return new WhatsAppSocketPool({
      // a pairing goes through the account's proxy, and tells where it stands
      ...accountProxies(new AccountRepository(db), secretsKeys, () => new Date()),
      ...(version.version && { version: version.version }),
      ...(config.whatsappWebSocketUrl && { webSocketUrl: config.whatsappWebSocketUrl }),
      holderId: `api:${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
      lease: new SocketLeases(loadScripts(redis), redisKeys(config.keyPrefix)),
      auth: new WhatsAppAuthRepository(db),
      // a session import's connection asks WhatsApp for the lock and the cap too: kept for the senders
      newChats: new NewChatLimitRepository(db),
      secretsKeys,
      makeSocket: baileysSocketFactory,
      clock: systemClock,
      // Baileys logs every frame below warn
      logger: logger.child({ component: 'whatsapp' }, { level: ['error', 'fatal', 'silent'].includes(config.logLevel) ? config.logLevel : 'warn' }),
    });
  });
  const pairing: WhatsAppPairing = {
    pair: async (accountId, request, hooks) => (await pool.get()).pair(accountId, request, hooks),
    importLinkedSession: async (accountId, body): Promise<SessionImport> => {
      const { readLinkedSession, describeRefusal, classifyWhatsAppFailure } = await import('@metronome/transports/whatsapp');
      const read = readLinkedSession(body);
      if (!read.ok) return { outcome: 'invalid', field: read.field, message: read.message };
      const refusal = await (await pool.get()).importSession(accountId, read.session);
      if (!refusal) return { outcome: 'opened' };
      const code = refusal.reason === 'connect-failed' ? classifyWhatsAppFailure(refusal.failure, 1, undefined, false).code : refusal.reason.replace('-', '_');
      return { outcome: 'refused', code, message: describeRefusal(refusal) };
    },
  };
  const sockets: Pick<WhatsAppSocketPool, 'use'> = {
    use: async <T>(accountId: string, work: (socket: WhatsAppSocket) => Promise<T>) => (await pool.get()).use(accountId, work),
  };
  const close = async () => {
    const loading = pool.loaded();
    if (loading) await (await loading.catch(() => null))?.close();
  };
  return { pairing, sockets, close };
}

export function telegramSignInOnFirstUse(config: ApiConfig): TelegramSignIn {
  const factory = onFirstUse(async () => {
    const { configureTelegramEndpoint, loadUserClientFactory } = await import('@metronome/transports/telegram-user');
    const dc = configureTelegramEndpoint({ TELEGRAM_USER_DC: config.telegramUser?.dc, TELEGRAM_USER_SERVER_KEY: config.telegramUser?.serverKey });
    const make = await loadUserClientFactory(config.telegramUser?.clientModule ?? undefined);
    return { make, dc };
  });
  return {
    makeClient: async (session, options) => {
      const { make, dc } = await factory.get();
      return make(session, { ...options, dc });
    },
    apiId: config.telegramUser?.apiId ?? 0,
    apiHash: config.telegramUser?.apiHash ?? '',
  };
}
