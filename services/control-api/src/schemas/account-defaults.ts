import { DEFAULT_WARMUP_STEPS, defaultOptOutKeywords, defaultSendDelay, defaultTyping } from '@metronome/core';
import { z } from 'zod';
import { limitSettings, limitSettingsView } from './account-limits.js';

// What a new account gets for each setting its POST leaves out (CONTRACT §3, accounts). POST
// /v1/accounts applies these and GET /v1/account-defaults answers them, from this one function,
// so a form that shows them shows what the API does.

export const ACCOUNT_PLATFORMS = ['http', 'telegram', 'whatsapp', 'telegram_user'] as const;
export type AccountPlatform = (typeof ACCOUNT_PLATFORMS)[number];

const delay = z.object({ min: z.number().int(), max: z.number().int() });

export const accountDefaults = z
  .object({
    platform: z.enum(ACCOUNT_PLATFORMS),
    maxSendPerMinute: z.number().int().describe('the pace of an account that sets none (DEFAULT_MAX_SEND_PER_MINUTE)'),
    groupConcurrency: z.number().int().describe('chats sent to at once by an account that sets none (DEFAULT_GROUP_CONCURRENCY)'),
    sendDelaySeconds: delay.nullable().describe('the human gap between two sends a new account gets; null: none'),
    warmupSteps: z
      .array(z.object({ afterDays: z.number().int(), dailyCap: z.number().int().nullable() }))
      .describe('the steps of a warm-up that names none; a new account has no warm-up unless its POST gives one (`warmup: {}`: these steps from now)'),
    optOutKeywords: z.array(z.string()).describe('the opt-out keywords a new account gets'),
    typing: z
      .object({ charsPerSecond: z.number().int(), maxSeconds: z.number().int() })
      .nullable()
      .describe('typing first, as a new account gets it; null: none'),
    limitSettings: limitSettingsView,
  })
  .meta({ id: 'AccountDefaults' });

export const accountDefaultsList = z.object({ items: z.array(accountDefaults) }).meta({ id: 'AccountDefaultsList' });

/** The settings a new account of `platform` gets when its POST leaves them out; `deployment`: the service's configured pace defaults. */
export function newAccountDefaults(
  platform: AccountPlatform,
  deployment: { maxSendPerMinute: number; groupConcurrency: number },
): z.output<typeof accountDefaults> {
  return {
    platform,
    maxSendPerMinute: deployment.maxSendPerMinute,
    groupConcurrency: deployment.groupConcurrency,
    sendDelaySeconds: defaultSendDelay(platform),
    warmupSteps: DEFAULT_WARMUP_STEPS.map((s) => ({ ...s })),
    optOutKeywords: defaultOptOutKeywords(platform),
    typing: defaultTyping(platform),
    limitSettings: limitSettings(),
  };
}
