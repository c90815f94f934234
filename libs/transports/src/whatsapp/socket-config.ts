import { makeCacheableSignalKeyStore, type GroupMetadata } from '@whiskeysockets/baileys';
import type { AuthHandle } from './auth-state.js';
import type { Connection } from './connection.js';
import type { GroupMetadataCache } from './group-metadata-cache.js';
import { proxyAgents } from './proxy-socket.js';
import type { SentMessages } from './sent-messages.js';
import type { WhatsAppSocketPoolOptions } from './socket-pool-options.js';
import type { WhatsAppSocket, WhatsAppSocketConfig } from './socket.js';
import type { WriteMarks } from './write-marks.js';

export function socketConfig(
  o: WhatsAppSocketPoolOptions,
  pool: { groups: GroupMetadataCache; sent: SentMessages; writes: WriteMarks; connectTimeoutMs: number },
  accountId: string,
  auth: AuthHandle,
  proxy: Connection['proxy'],
  socket: () => WhatsAppSocket | null,
): WhatsAppSocketConfig {
  const logger = o.logger.child({ accountId });
  return {
    // Baileys reads keys often; the cache answers repeats, writes still go to PostgreSQL at once.
    auth: { creds: auth.state.creds, keys: makeCacheableSignalKeyStore(auth.state.keys, logger) },
    cachedGroupMetadata: (jid) => {
      const s = socket();
      return s ? pool.groups.get(accountId, jid, (j) => s.groupMetadata(j)) : Promise.resolve(undefined as GroupMetadata | undefined);
    },
    getMessage: (key) => (key.id ? pool.sent.get(accountId, key.id) : Promise.resolve(undefined)),
    logger: pool.writes.logger(accountId, logger),
    connectTimeoutMs: pool.connectTimeoutMs,
    defaultQueryTimeoutMs: o.queryTimeoutMs ?? 60_000,
    // A refused key write is kept by the auth state; Baileys' own retries would only hold the send's answer 30 s behind.
    transactionOpts: { maxCommitRetries: 1, delayBetweenTriesMs: 0 },
    ...(o.version && { version: o.version }),
    ...(o.webSocketUrl && { waWebSocketUrl: o.webSocketUrl }),
    ...(o.uploadHost && { customUploadHosts: [{ hostname: o.uploadHost, maxContentLengthBytes: 100 * 1024 * 1024 }] }),
    ...proxyAgents(proxy?.settings ?? null),
    ...(o.userDevices && { userDevicesCache: o.userDevices.forAccount(accountId) }),
  };
}
