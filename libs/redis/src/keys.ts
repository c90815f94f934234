/** Every Redis key Metronome uses, under the deployment's KEY_PREFIX. BullMQ adds its own under `${prefix}:runs:`. */
export function redisKeys(prefix: string) {
  return {
    /** BullMQ's `prefix` option: queues live at `${prefix}:${queueName}:*` */
    queuePrefix: prefix,
    accountLock: (accountId: string) => `${prefix}:account:${accountId}:lock`,
    accountPace: (accountId: string) => `${prefix}:account:${accountId}:pace`,
    /** per-chat pace of one account (platforms that limit each chat, e.g. Telegram groups) */
    chatPace: (accountId: string, chatId: string) => `${prefix}:account:${accountId}:chat:${chatId}:pace`,
    schedulerLeader: `${prefix}:scheduler:leader`,
    /** the holder of an account's one live platform socket (WhatsApp), and who asked to take it over */
    socketLease: (accountId: string) => `${prefix}:account:${accountId}:socket`,
    socketHandover: (accountId: string) => `${prefix}:account:${accountId}:socket:handover`,
    /** the control API's per-token request limit (the token's sha256, never the token) */
    rateLimit: (tokenDigest: string) => `${prefix}:ratelimit:${tokenDigest}`,
  };
}

export type RedisKeys = ReturnType<typeof redisKeys>;
