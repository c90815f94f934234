import {
  duration,
  commonEnv,
  coolingEnv,
  int,
  parseEnv,
  port,
  redisConnection,
  secretsKey,
  url,
  whatsappEnv,
  telegramUserEnv,
  checkTelegramUserEnv,
  z,
  type RedisClusterNodes,
} from '@metronome/config';
import { STOP_DEADLINE_MS } from '@metronome/observability';

const schema = z.object({
  ...commonEnv,
  METRICS_PORT: port(9465),
  SECRETS_KEY: secretsKey,
  // The key SECRETS_KEY replaced: credentials sealed under it still open (key rotation).
  SECRETS_KEY_PREVIOUS: secretsKey,
  // Jobs are I/O-bound: most of a job's time is spent waiting for a pace slot, PostgreSQL or the platform, so many share a process.
  SENDER_CONCURRENCY: int(128, 1, 1000),
  SENDS_PER_JOB: int(20, 1, 10_000),
  DEFAULT_MAX_SEND_PER_MINUTE: int(40, 1, 60_000),
  DEFAULT_GROUP_CONCURRENCY: int(3, 1, 50),
  RATE_BURST: int(1, 1, 1000),
  MAX_RETRIES: int(5, 1, 100),
  SEND_TIMEOUT_MS: int(15_000, 100, 600_000),
  HTTP_TRANSPORT_URL: url('http://127.0.0.1:8090', ['http:', 'https:']),
  TELEGRAM_API_URL: url('https://api.telegram.org', ['http:', 'https:']),
  // Extensions: the longest in-process wait for a pace token, and how soon a job that found the account busy tries again.
  SENDER_MAX_INLINE_WAIT_MS: int(250, 0, 60_000),
  // How long a job waits in-process for a chat not due yet (held by its per-chat interval or a retry), from the lane's turn.
  SENDER_MAX_GATE_WAIT_MS: int(1_000, 0, 60_000),
  SENDER_LOCK_RETRY_MS: int(500, 10, 60_000),
  // How long what a replica holds outlives it: account locks, WhatsApp socket leases, target leases beyond a send, BullMQ's job lock plus stall check.
  SENDER_HOLD_MS: int(15_000, 3_000, 600_000),
  // PostgreSQL connections per replica: a few serve hundreds of lanes; max_connections is shared by every replica.
  DATABASE_POOL_SIZE: int(10, 1, 200),
  // Per-chat pace, sends per minute to one chat (Telegram: 20 a minute in a group); 0: none.
  CHAT_MAX_SEND_PER_MINUTE_TELEGRAM: int(20, 0, 60_000),
  CHAT_MAX_SEND_PER_MINUTE_WHATSAPP: int(0, 0, 60_000),
  CHAT_MAX_SEND_PER_MINUTE_HTTP: int(0, 0, 60_000),
  // A random wait of up to this many ms between two parts of one chat, so a multi-part message does not arrive with machine-regular spacing.
  PART_JITTER_MS: int(200, 0, 60_000),
  // Days a sent WhatsApp message can be asked for again by a device that could not decrypt it.
  WHATSAPP_RESEND_DAYS: int(7, 1, 90),
  // A chat's message within this long after a run's send to it counts as a reply to that run (CONTRACT §3 "Receipts"), as a duration (24h, 30m…).
  REPLY_WINDOW: duration('24h'),
  // Always-connected WhatsApp and telegram_user accounts (issue 53): on or off, a sender's re-plan period, the cluster-wide connect pace.
  ALWAYS_CONNECTED: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
  ACCOUNT_HOLD_EVERY_MS: int(5_000, 200, 600_000),
  ACCOUNT_CONNECTS_PER_SECOND: int(25, 1, 1_000),
  // Automatic cooling (libs/config coolingEnv; CONTRACT §2)
  ...coolingEnv,
  ...whatsappEnv,
  ...telegramUserEnv,
});

/** The variables, with KEY_PREFIX as used (hash-tagged on a cluster) and REDIS: where to connect. */
export type SenderConfig = z.infer<typeof schema> & { REDIS: string | RedisClusterNodes };

export function loadConfig(env: Record<string, string | undefined>): SenderConfig {
  const config = parseEnv(schema, env);
  if (!config.SECRETS_KEY && config.NODE_ENV !== 'development') {
    throw new Error('SECRETS_KEY is required outside development: set it to 32 bytes as hex (openssl rand -hex 32) or base64');
  }
  checkTelegramUserEnv(config);
  const { redis, keyPrefix } = redisConnection(config);
  return { ...config, KEY_PREFIX: keyPrefix, REDIS: redis };
}

const DRAIN_MS_AT_DEFAULT = 3_000;

/** How long a stop lets sends finish before closing the platforms under them: the later steps are bounded and fit in 9 s, so a longer deadline's extra time all goes here (3 s of 9; a third of a shorter one). */
export function drainMs(deadlineMs: number): number {
  if (deadlineMs >= STOP_DEADLINE_MS) return DRAIN_MS_AT_DEFAULT + deadlineMs - STOP_DEADLINE_MS;
  return Math.round((DRAIN_MS_AT_DEFAULT * deadlineMs) / STOP_DEADLINE_MS);
}
