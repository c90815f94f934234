import { z } from 'zod';
import { redisClusterNodes } from './redis.js';

/** Parses `env` once per service; a ConfigError names each bad variable, its value and what is accepted. Libs never read process.env. */
export function parseEnv<S extends z.ZodObject>(schema: S, env: Record<string, string | undefined>): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? '?');
    const value = env[name];
    // a URL's password never reaches a log: `redis://user:***@host`
    const shown = value === undefined ? 'unset' : JSON.stringify(looksSecret(name) ? '***' : value.replace(/(\/\/[^:@/]*:)[^@/]*@/g, '$1***@'));
    return `${name}=${shown}: ${issue.message}`;
  });
  throw new ConfigError(lines);
}

export class ConfigError extends Error {
  readonly code = 'config_invalid';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

function looksSecret(name: string): boolean {
  return /TOKEN|KEY|SECRET|PASSWORD/.test(name);
}

/** Integer variable with bounds and a default. */
export const int = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `expected an integer from ${min} to ${max}` });
        return z.NEVER;
      }
      return n;
    });

/** Port number; 0 means "pick a free one". */
export const port = (fallback: number) => int(fallback, 0, 65535);

/** A URL with one of the given protocols. */
export const url = (fallback: string, protocols: string[]) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const value = v === undefined || v === '' ? fallback : v;
      try {
        const parsed = new URL(value);
        if (!protocols.includes(parsed.protocol)) throw new Error('protocol');
        return value.replace(/\/+$/, '');
      } catch {
        ctx.addIssue({ code: 'custom', message: `expected a ${protocols.map((p) => `${p}//`).join(' or ')} URL` });
        return z.NEVER;
      }
    });

/** Duration like `7d`, `12h`, `30m`, `45s`, `500ms` or a plain number of seconds; parsed to milliseconds. */
export const duration = (fallback: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      const ms = parseDuration(v === undefined || v === '' ? fallback : v);
      if (ms === null) {
        ctx.addIssue({ code: 'custom', message: 'expected a duration such as 7d, 12h, 30m, 45s or 500ms' });
        return z.NEVER;
      }
      return ms;
    });

export function parseDuration(value: string): number | null {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(value.trim());
  if (!match) return null;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 's'];
  return Math.round(Number(match[1]) * (unit ?? 1000));
}

export const logLevel = z
  .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  .optional()
  .transform((v) => v ?? 'info');

/** KEY_PREFIX: letters, digits, dot, dash, underscore, and at most one `{…}` Redis Cluster hash tag. */
export const keyPrefix = z
  .string()
  .regex(
    /^(?=.{1,66}$)[A-Za-z0-9_.-]*(\{[A-Za-z0-9_.-]+\})?[A-Za-z0-9_.-]*$/,
    'expected 1–64 letters, digits, dot, dash or underscore, optionally with one {…} hash tag such as {mtr}',
  )
  .optional()
  .transform((v) => v ?? 'mtr');

/** STOP_DEADLINE_MS: how long a stop may take after SIGTERM (libs/observability's STOP_DEADLINE_MS by default); set it a little under the orchestrator's grace. */
export const stopDeadlineMs = int(9_000, 3_000, 600_000);

/** The variables every service reads. */
export const commonEnv = {
  DATABASE_URL: url('postgres://postgres@127.0.0.1:5432/metronome', ['postgres:', 'postgresql:']),
  REDIS_URL: url('redis://127.0.0.1:6379', ['redis:', 'rediss:']),
  REDIS_CLUSTER_NODES: redisClusterNodes,
  // the cluster's cluster-node-timeout: the services ride a failover out for about twice it
  REDIS_CLUSTER_NODE_TIMEOUT_MS: int(15_000, 100, 600_000),
  KEY_PREFIX: keyPrefix,
  LOG_LEVEL: logLevel,
  STOP_DEADLINE_MS: stopDeadlineMs,
  NODE_ENV: z
    .string()
    .optional()
    .transform((v) => v ?? 'production'),
};

/** 32 bytes as 64 hex characters or base64; required outside development, where a fixed development key stands in. */
export const secretsKey = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v === '') return undefined;
    const key = /^[0-9a-fA-F]{64}$/.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
    if (key.length !== 32) {
      ctx.addIssue({ code: 'custom', message: 'expected 32 bytes as 64 hex characters or base64 (openssl rand -hex 32)' });
      return z.NEVER;
    }
    return key;
  });

/** How WhatsApp sockets connect (CONTRACT §2): the version they announce (fixed, or fetched at start) and the server they reach. */
export const whatsappEnv = {
  WHATSAPP_VERSION: z
    .string()
    .optional()
    .transform((v, ctx): [number, number, number] | null => {
      if (v === undefined || v === '') return null;
      const parts = v.trim().split('.');
      if (parts.length !== 3 || !parts.every((p) => /^\d{1,12}$/.test(p))) {
        ctx.addIssue({ code: 'custom', message: 'expected a WhatsApp Web version: three integers, as 2.3000.1043857760' });
        return z.NEVER;
      }
      return parts.map(Number) as [number, number, number];
    }),
  WHATSAPP_FETCH_VERSION: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v === 'true'),
  /** The SOCKS proxy the version fetch goes through (CONTRACT §2); unset, this server's own address. */
  WHATSAPP_VERSION_PROXY: z
    .string()
    .optional()
    .transform((v, ctx): string | null => {
      if (v === undefined || v === '') return null;
      let url: URL | null = null;
      try {
        url = new URL(v);
      } catch {
        // not a URL: said below
      }
      if (!url || !['socks5:', 'socks5h:'].includes(url.protocol) || url.hostname === '' || url.port === '') {
        ctx.addIssue({ code: 'custom', message: 'expected a SOCKS5 proxy URL, as socks5h://user:password@host:1080' });
        return z.NEVER;
      }
      return v;
    }),
  /** Unset: WhatsApp's own server (`wss://web.whatsapp.com/ws/chat`); else a staging or local wire-level server. */
  WHATSAPP_WS_URL: z
    .string()
    .optional()
    .transform((v, ctx): string | null => {
      if (v === undefined || v === '') return null;
      let url: URL;
      try {
        url = new URL(v);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'expected a WebSocket URL, as wss://web.whatsapp.com/ws/chat' });
        return z.NEVER;
      }
      if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
        ctx.addIssue({ code: 'custom', message: `expected a ws:// or wss:// URL, got ${url.protocol}//` });
        return z.NEVER;
      }
      return url.href;
    }),
  /** `host:port` of a staging or local HTTPS media server where media are uploaded first; unset, only the hosts WhatsApp names. */
  WHATSAPP_UPLOAD_HOST: z
    .string()
    .optional()
    .transform((v, ctx): string | null => {
      if (v === undefined || v === '') return null;
      if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(v)) {
        ctx.addIssue({ code: 'custom', message: 'expected host or host:port, as media.staging.example:8443' });
        return z.NEVER;
      }
      return v;
    }),
};

/** Automatic cooling (CONTRACT §2), on by default: a WhatsApp ban is for good, and repeated waits are its surest warning. */
export const coolingEnv = {
  COOLING_ENABLED: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v !== 'false'),
  COOLING_FLOOD_WAITS_PER_HOUR: int(3, 0, 10_000),
  COOLING_FAILURE_PERCENT: int(20, 0, 99),
  COOLING_FAILURE_WINDOW: int(50, 1, 10_000),
  COOLING_DURATION: duration('30m'),
  COOLING_MAX_DURATION: duration('24h'),
  COOLING_RECOVERY_PERCENT: int(10, 1, 100),
  COOLING_RECOVERY_INTERVAL: duration('10m'),
};

type CoolingEnv = { [K in keyof typeof coolingEnv]: z.output<(typeof coolingEnv)[K]> };

/** The variables as libs/core's CoolingSettings (libs/config does not import core). */
export function coolingSettings(c: CoolingEnv) {
  return {
    enabled: c.COOLING_ENABLED,
    floodWaitsPerHour: c.COOLING_FLOOD_WAITS_PER_HOUR,
    failureShare: c.COOLING_FAILURE_PERCENT / 100,
    failureWindow: c.COOLING_FAILURE_WINDOW,
    coolingMs: Math.max(1, c.COOLING_DURATION),
    maxCoolingMs: Math.max(1, c.COOLING_MAX_DURATION),
    recoveryStep: c.COOLING_RECOVERY_PERCENT / 100,
    recoveryIntervalMs: Math.max(1, c.COOLING_RECOVERY_INTERVAL),
  };
}

export { z };
export { redisClusterNodes, hashTagged, redisConnection, type RedisClusterNodes } from './redis.js';

/** telegram_user: the application's id and hash from my.telegram.org; TELEGRAM_USER_CLIENT_MODULE (a GramJS fake) is for tests only. */
export const telegramUserEnv = {
  TELEGRAM_API_ID: z.coerce.number().int().min(0).default(0),
  TELEGRAM_API_HASH: z.string().default(''),
  TELEGRAM_USER_CLIENT_MODULE: z.string().optional(),
  /** where a new sign-in connects, `{dcId}@{ip}`; default Telegram's DC 2 */
  TELEGRAM_USER_DC: z
    .string()
    .regex(/^\d{1,3}@([0-9.]+|\[[0-9a-fA-F:]+\])$/, 'must be {dcId}@{ip}, e.g. 2@149.154.167.40')
    .optional(),
  /** an extra RSA public key (PEM; `\n` may stand for its line breaks) trusted for the key exchange, as Telegram's test data centres need */
  TELEGRAM_USER_SERVER_KEY: z
    .string()
    .transform((s) => s.replace(/\\n/g, '\n'))
    .refine((s) => s.includes('-----BEGIN PUBLIC KEY-----'), 'must be an RSA public key in PEM (-----BEGIN PUBLIC KEY-----)')
    .optional(),
};

/** Refuses the test-only client module outside development and test (`NODE_ENV`). */
export function checkTelegramUserEnv(config: { NODE_ENV: string; TELEGRAM_USER_CLIENT_MODULE?: string | undefined }): void {
  if (config.TELEGRAM_USER_CLIENT_MODULE && config.NODE_ENV === 'production') {
    throw new Error('TELEGRAM_USER_CLIENT_MODULE is for tests only: unset it in production (NODE_ENV=production), where GramJS is used');
  }
}
