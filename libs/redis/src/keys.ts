/**
 * Every Redis key Metronome uses, under the deployment's KEY_PREFIX. BullMQ adds its own under
 * `${prefix}:runs:`. On a Redis Cluster the prefix carries a hash tag (`{mtr}`, see
 * @metronome/config `redisConnection`), so every key here and every queue key share one slot:
 * the multi-key scripts (pace-reserve-3, pace-reserve-safe-6, pace-seed-3, socket-lease-*-2), MULTI, MGET and BullMQ's scripts
 * then never cross slots. Scripts get every key they touch in KEYS, never build one in Lua.
 */
export function redisKeys(prefix: string) {
  return {
    /** BullMQ's `prefix` option: queues live at `${prefix}:${queueName}:*` */
    queuePrefix: prefix,
    accountLock: (accountId: string) => `${prefix}:account:${accountId}:lock`,
    accountPace: (accountId: string) => `${prefix}:account:${accountId}:pace`,
    /** an account's sends in the last 24 hours, a sorted set by slot time (accounts with caps or sendDelaySeconds) */
    accountSends: (accountId: string) => `${prefix}:account:${accountId}:sends`,
    /** the earliest time of an account's next send, after its human gap (sendDelaySeconds) */
    accountGap: (accountId: string) => `${prefix}:account:${accountId}:gap`,
    /** when a capped account's next slot frees (read by the API's `waiting`) */
    accountCap: (accountId: string) => `${prefix}:account:${accountId}:cap`,
    /** per-chat pace of one account (platforms that limit each chat, e.g. Telegram groups) */
    chatPace: (accountId: string, chatId: string) => `${prefix}:account:${accountId}:chat:${chatId}:pace`,
    /** what one chat got from an account in the longest chat window, a sorted set by time (libs/core chatWindows) */
    chatSends: (accountId: string, chatId: string) => `${prefix}:account:${accountId}:chat:${chatId}:sends`,
    /** set once every chat's sends of an account were rebuilt from PostgreSQL; outlives them */
    chatSendsSeeded: (accountId: string) => `${prefix}:account:${accountId}:chat-sends`,
    schedulerLeader: `${prefix}:scheduler:leader`,
    /** read, never written, by the services' `/readyz`: it reaches the node serving the deployment's slot */
    readiness: `${prefix}:readiness`,
    /** the API's nudge to the scheduler leader to tick at once (a list of at most one entry) */
    schedulerWake: `${prefix}:scheduler:wake`,
    /** the holder of an account's one live platform socket (WhatsApp), and who asked to take it over */
    socketLease: (accountId: string) => `${prefix}:account:${accountId}:socket`,
    socketReleased: (accountId: string) => `${prefix}:account:${accountId}:socket:released`,
    socketHandover: (accountId: string) => `${prefix}:account:${accountId}:socket:handover`,
    /** a WhatsApp recipient's devices as one account's socket learnt them (`user`: a JID's user part), a cache entry with PX */
    userDevices: (accountId: string, user: string) => `${prefix}:account:${accountId}:devices:${user}`,
    /** the live senders, scored by when each heartbeat runs out (always-connected accounts are spread over them) */
    senders: `${prefix}:senders`,
    /** the cluster-wide pace of opening always-connected accounts' connections (GCRA) */
    accountConnects: `${prefix}:account-connects`,
    /** the control API's per-token request limit (the token's sha256, never the token) */
    rateLimit: (tokenDigest: string) => `${prefix}:ratelimit:${tokenDigest}`,
    /** the control API's open `/v1/events` streams of one caller (a sorted set of slots) */
    sseSlots: (caller: string) => `${prefix}:sse:${caller}`,
  };
}

export type RedisKeys = ReturnType<typeof redisKeys>;
