import { commonEnv, duration, int, parseEnv, port, z } from '@metronome/config';

const schema = z.object({
  ...commonEnv,
  METRICS_PORT: port(9464),
  SCHEDULER_TICK_MS: int(1000, 50, 60_000),
  SCHEDULER_BATCH: int(500, 1, 10_000),
  SCHEDULER_JITTER_MS: int(0, 0, 3_600_000),
  PAUSED_RUN_TTL: duration('7d'),
  NO_ACCOUNT_AUTOPAUSE_AFTER: int(0, 0, 1_000_000),
});

export type SchedulerConfig = z.infer<typeof schema>;

export function loadConfig(env: Record<string, string | undefined>): SchedulerConfig {
  return parseEnv(schema, env);
}
