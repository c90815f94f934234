import { commonEnv, duration, int, parseEnv, port, redisConnection, z, type RedisClusterNodes } from '@metronome/config';

const schema = z.object({
  ...commonEnv,
  METRICS_PORT: port(9464),
  SCHEDULER_TICK_MS: int(1000, 50, 60_000),
  SCHEDULER_BATCH: int(500, 1, 10_000),
  SCHEDULER_JITTER_MS: int(0, 0, 3_600_000),
  PAUSED_RUN_TTL: duration('7d'),
  // Not delivering (CONTRACT §3 "Receipts"): no receipt for the last NOT_DELIVERING_SENDS sends in the window; 0 turns it off.
  NOT_DELIVERING_SENDS: int(20, 0, 100_000),
  NOT_DELIVERING_WINDOW: duration('30m'),
  NOT_DELIVERING_GRACE: duration('2m'),
  NO_ACCOUNT_AUTOPAUSE_AFTER: int(0, 0, 1_000_000),
  HISTORY_RETENTION: duration('90d'),
  RUN_SUMMARY_RETENTION: duration('400d'),
  RETENTION_SWEEP_MS: int(60_000, 50, 86_400_000),
  RETENTION_BATCH: int(1000, 1, 100_000),
  RETENTION_PAUSE_MS: int(300, 0, 10_000),
});

/** The variables, with KEY_PREFIX as used (hash-tagged on a cluster) and REDIS: where to connect. */
export type SchedulerConfig = z.infer<typeof schema> & { REDIS: string | RedisClusterNodes };

export function loadConfig(env: Record<string, string | undefined>): SchedulerConfig {
  const config = parseEnv(schema, env);
  const { redis, keyPrefix } = redisConnection(config);
  return { ...config, KEY_PREFIX: keyPrefix, REDIS: redis };
}
