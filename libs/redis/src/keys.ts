/** Every Redis key Metronome uses, under the deployment's KEY_PREFIX. BullMQ adds its own under `${prefix}:runs:`. */
export function redisKeys(prefix: string) {
  return {
    /** BullMQ's `prefix` option: queues live at `${prefix}:${queueName}:*` */
    queuePrefix: prefix,
    accountLock: (accountId: string) => `${prefix}:account:${accountId}:lock`,
    accountPace: (accountId: string) => `${prefix}:account:${accountId}:pace`,
    schedulerLeader: `${prefix}:scheduler:leader`,
  };
}

export type RedisKeys = ReturnType<typeof redisKeys>;
