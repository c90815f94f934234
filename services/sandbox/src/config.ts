import { int, logLevel, parseEnv, port, stopDeadlineMs, z } from '@metronome/config';
import type { Limits } from './limits.js';

const probability = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0 || n > 1) {
        ctx.addIssue({ code: 'custom', message: 'expected a number from 0 to 1' });
        return z.NEVER;
      }
      return n;
    });

const sandboxEnv = z.object({
  SANDBOX_PORT: port(8090),
  HOST: z
    .string()
    .min(1)
    .optional()
    .transform((v) => v ?? '127.0.0.1'),
  LOG_LEVEL: logLevel,
  STOP_DEADLINE_MS: stopDeadlineMs,
  SANDBOX_LATENCY_MS: int(0, 0, 600_000),
  SANDBOX_MAX_PER_MINUTE: int(0, 0, 6_000_000),
  SANDBOX_BURST: int(1, 1, 100_000),
  SANDBOX_SLOW_MODE_SECONDS: int(0, 0, 86_400),
  SANDBOX_FAULT_RATE: probability(0),
  SANDBOX_SEED: int(1, 0, 2 ** 32 - 1),
  // chats in every account's default directory (chat-1…chat-N, titled by the seed)
  SANDBOX_DIRECTORY_SIZE: int(60, 0, 100_000),
  // The ban model (ban-model.ts), off by default: hidden limits that close an account for good.
  SANDBOX_BAN_HOURLY_CAP: int(0, 0, 10_000_000),
  SANDBOX_BAN_DAILY_CAP: int(0, 0, 10_000_000),
  SANDBOX_BAN_MIN_GAP_MS: int(0, 0, 86_400_000),
  // where delivery receipts are posted (Metronome's POST /v1/platform/receipts); unset: none
  SANDBOX_RECEIPTS_URL: z.url().optional(),
});

export interface SandboxConfig {
  port: number;
  host: string;
  logLevel: z.infer<typeof logLevel>;
  /** The defaults applied to every account and chat; `POST /sandbox/reset` returns to these. */
  limits: Limits;
  seed: number;
  /** chats in every account's default directory (directory.ts) */
  directorySize?: number;
  /** where receipts are posted (SANDBOX_RECEIPTS_URL); null: none until PUT /sandbox/receipts */
  receiptsUrl?: string | null;
  stopDeadlineMs: number;
}

export function loadConfig(env: Record<string, string | undefined>): SandboxConfig {
  const e = parseEnv(sandboxEnv, env);
  return {
    port: e.SANDBOX_PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    limits: {
      latencyMs: e.SANDBOX_LATENCY_MS,
      maxPerMinute: e.SANDBOX_MAX_PER_MINUTE,
      burst: e.SANDBOX_BURST,
      slowModeSeconds: e.SANDBOX_SLOW_MODE_SECONDS,
      faultRate: e.SANDBOX_FAULT_RATE,
      banHourlyCap: e.SANDBOX_BAN_HOURLY_CAP,
      banDailyCap: e.SANDBOX_BAN_DAILY_CAP,
      banMinGapMs: e.SANDBOX_BAN_MIN_GAP_MS,
    },
    seed: e.SANDBOX_SEED,
    directorySize: e.SANDBOX_DIRECTORY_SIZE,
    receiptsUrl: e.SANDBOX_RECEIPTS_URL ?? null,
    stopDeadlineMs: e.STOP_DEADLINE_MS,
  };
}
