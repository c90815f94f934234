import { isIP } from 'node:net';
import { DEFAULT_WEBHOOK_RETRY, DEVELOPMENT_SECRETS_KEY, parseAllowedHosts, type CoolingSettings, type HostPattern } from '@metronome/core';
import {
  commonEnv,
  coolingEnv,
  coolingSettings,
  whatsappEnv,
  telegramUserEnv,
  int,
  parseEnv,
  port,
  redisConnection,
  secretsKey,
  z,
  type RedisClusterNodes,
} from '@metronome/config';

/** TRUSTED_PROXIES: addresses or CIDR ranges whose `X-Forwarded-For` names the client; unset, the header is ignored. */
const trustedProxies = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const entries = (v ?? '')
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '');
    const bad = entries.filter((e) => !isAddressOrRange(e));
    if (bad.length > 0) {
      ctx.addIssue({ code: 'custom', message: `expected comma-separated IP addresses or CIDR ranges (10.0.0.0/8); not one: ${bad.join(', ')}` });
      return z.NEVER;
    }
    return entries;
  });

/** Unset: `*`, any public host. */
const webhookAllowedHosts = z
  .string()
  .optional()
  .transform((v, ctx) => {
    try {
      return parseAllowedHosts(v ?? '*');
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  });

function isAddressOrRange(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d{1,3}$/.test(prefix) && bits <= (family === 4 ? 32 : 128);
}

const apiEnv = z
  .object({
    ...commonEnv,
    HOST: z
      .string()
      .min(1)
      .optional()
      .transform((v) => v ?? '127.0.0.1'),
    PORT: port(8080),
    ADMIN_TOKEN: z
      .string()
      .optional()
      .transform((v, ctx) => {
        if (v === undefined || v === '') return undefined;
        // A short operator token can be guessed; the API is reachable by every tenant.
        if (v.length < 16) ctx.addIssue({ code: 'custom', message: 'expected at least 16 characters (openssl rand -hex 24)' });
        return v;
      }),
    SECRETS_KEY: secretsKey,
    SECRETS_KEY_PREVIOUS: secretsKey,
    MIN_INTERVAL_SECONDS: int(60, 1, 31_536_000),
    // the scheduler's own variable: the API plans the first runs it creates with the same jitter
    SCHEDULER_JITTER_MS: int(0, 0, 3_600_000),
    INSTANT_STARTS: z
      .enum(['create', 'nudge'])
      .optional()
      .transform((v) => v ?? 'create'),
    MEDIA_MAX_BYTES: int(16_777_216, 1, 1_073_741_824),
    DEFAULT_MAX_SEND_PER_MINUTE: int(40, 1, 60_000),
    DEFAULT_GROUP_CONCURRENCY: int(3, 1, 50),
    // the senders' burst: `waiting` computes an account's next slot as their pace script does
    RATE_BURST: int(1, 1, 1000),
    API_RATE_LIMIT_PER_MINUTE: int(600, 1, 1_000_000),
    // A client that mistypes its token a few times is never near it; a guesser is at once.
    AUTH_FAILURES_PER_MINUTE: int(30, 1, 1_000_000),
    TRUSTED_PROXIES: trustedProxies,
    SSE_MAX_PER_TOKEN: int(10, 1, 10_000),
    WEBHOOK_ALLOWED_HOSTS: webhookAllowedHosts,
    WEBHOOK_RETRY_BASE_MS: int(DEFAULT_WEBHOOK_RETRY.baseMs, 1, 3_600_000),
    WEBHOOK_RETRY_MAX_MS: int(DEFAULT_WEBHOOK_RETRY.maxMs, 1, 86_400_000),
    WEBHOOK_TIMEOUT_MS: int(10_000, 100, 60_000),
    WEBHOOK_POLL_MS: int(1_000, 10, 60_000),
    ...coolingEnv,
    ...whatsappEnv,
    ...telegramUserEnv,
  })
  // Outside development an API without an operator token or a credentials key is a misconfiguration.
  .superRefine((env, ctx) => {
    if (env.TELEGRAM_USER_CLIENT_MODULE && env.NODE_ENV === 'production')
      ctx.addIssue({ code: 'custom', path: ['TELEGRAM_USER_CLIENT_MODULE'], message: 'for tests only: unset it in production, where GramJS is used' });
    if (env.NODE_ENV === 'development') return;
    if (!env.ADMIN_TOKEN) ctx.addIssue({ code: 'custom', path: ['ADMIN_TOKEN'], message: 'required unless NODE_ENV=development' });
    if (!env.SECRETS_KEY) ctx.addIssue({ code: 'custom', path: ['SECRETS_KEY'], message: 'required unless NODE_ENV=development (openssl rand -hex 32)' });
  });

export interface ApiConfig {
  databaseUrl: string;
  redisUrl: string;
  redisCluster?: RedisClusterNodes;
  /** hash-tagged (`{mtr}`) on a cluster */
  keyPrefix: string;
  logLevel: string;
  nodeEnv: string;
  host: string;
  port: number;
  /** null only in development without ADMIN_TOKEN: then no request is the operator */
  adminToken: string | null;
  secretsKey: Buffer;
  /** only opens (a WhatsApp auth state sealed before the rotation) */
  secretsKeyPrevious: Buffer | null;
  developmentSecretsKey: boolean;
  whatsappVersion?: { configured: [number, number, number] | null; fetchLatest: boolean; proxy: string | null };
  whatsappWebSocketUrl?: string | null;
  telegramUser?: { apiId: number; apiHash: string; clientModule: string | null; dc?: string | undefined; serverKey?: string | undefined };
  minIntervalSeconds: number;
  /** for the due first runs the API creates itself (instant starts); absent: 0 */
  schedulerJitterMs?: number;
  /** `create` (default): the API creates a due occurrence's run with the campaign; `nudge`: it only wakes the scheduler leader. */
  instantStarts?: 'create' | 'nudge';
  mediaMaxBytes: number;
  defaultMaxSendPerMinute: number;
  defaultGroupConcurrency: number;
  /** the senders' RATE_BURST; absent: 1 */
  rateBurst?: number;
  rateLimitPerMinute: number;
  authFailuresPerMinute: number;
  trustedProxies: string[];
  /** `/v1/events` streams per token, counted across replicas */
  sseMaxPerToken: number;
  webhooks?: WebhookConfig;
  cooling?: CoolingSettings;
  /** STOP_DEADLINE_MS; absent: libs/observability's default */
  stopDeadlineMs?: number;
}

export interface WebhookConfig {
  allowedHosts: HostPattern[];
  /** doubles per attempt up to retryMaxMs, for 24 h */
  retryBaseMs: number;
  retryMaxMs: number;
  /** connecting included */
  timeoutMs: number;
  pollMs: number;
}

export const DEFAULT_WEBHOOK_CONFIG: WebhookConfig = {
  allowedHosts: [{ host: '*', port: null }],
  retryBaseMs: DEFAULT_WEBHOOK_RETRY.baseMs,
  retryMaxMs: DEFAULT_WEBHOOK_RETRY.maxMs,
  timeoutMs: 10_000,
  pollMs: 1_000,
};

/** Reads the API's variables once; throws a ConfigError naming every bad one. */
export function loadConfig(env: Record<string, string | undefined>): ApiConfig {
  const e = parseEnv(apiEnv, env);
  const { redis, keyPrefix } = redisConnection(e);
  return {
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    ...(typeof redis === 'string' ? {} : { redisCluster: redis }),
    keyPrefix,
    logLevel: e.LOG_LEVEL,
    nodeEnv: e.NODE_ENV,
    host: e.HOST,
    port: e.PORT,
    adminToken: e.ADMIN_TOKEN ?? null,
    secretsKey: e.SECRETS_KEY ?? DEVELOPMENT_SECRETS_KEY,
    secretsKeyPrevious: e.SECRETS_KEY_PREVIOUS ?? null,
    developmentSecretsKey: e.SECRETS_KEY === undefined,
    whatsappVersion: { configured: e.WHATSAPP_VERSION, fetchLatest: e.WHATSAPP_FETCH_VERSION, proxy: e.WHATSAPP_VERSION_PROXY },
    whatsappWebSocketUrl: e.WHATSAPP_WS_URL,
    telegramUser: {
      apiId: e.TELEGRAM_API_ID,
      apiHash: e.TELEGRAM_API_HASH,
      clientModule: e.TELEGRAM_USER_CLIENT_MODULE ?? null,
      dc: e.TELEGRAM_USER_DC,
      serverKey: e.TELEGRAM_USER_SERVER_KEY,
    },
    minIntervalSeconds: e.MIN_INTERVAL_SECONDS,
    schedulerJitterMs: e.SCHEDULER_JITTER_MS,
    instantStarts: e.INSTANT_STARTS,
    mediaMaxBytes: e.MEDIA_MAX_BYTES,
    defaultMaxSendPerMinute: e.DEFAULT_MAX_SEND_PER_MINUTE,
    defaultGroupConcurrency: e.DEFAULT_GROUP_CONCURRENCY,
    rateBurst: e.RATE_BURST,
    rateLimitPerMinute: e.API_RATE_LIMIT_PER_MINUTE,
    authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
    trustedProxies: e.TRUSTED_PROXIES,
    sseMaxPerToken: e.SSE_MAX_PER_TOKEN,
    webhooks: {
      allowedHosts: e.WEBHOOK_ALLOWED_HOSTS,
      retryBaseMs: e.WEBHOOK_RETRY_BASE_MS,
      retryMaxMs: Math.max(e.WEBHOOK_RETRY_BASE_MS, e.WEBHOOK_RETRY_MAX_MS),
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      pollMs: e.WEBHOOK_POLL_MS,
    },
    cooling: coolingSettings(e),
    stopDeadlineMs: e.STOP_DEADLINE_MS,
  };
}
