import { DEFAULT_COOLING, effectivePerMinute, paceFactorAt, restrictionWords, warmupCapToday, type CoolingSettings } from '@metronome/core';
import { limitInputs, limitValuesView, limitViews } from './account-limits.js';
import type { AccountRow } from '@metronome/db';
import { z } from 'zod';
import { chatId, id, iso, isoOrNull, pageOf, pageQuery, text, time, timeInput } from './common.js';
import { directoryState, directoryStateView } from './chat-directory.js';
import { newChats, newChatsView } from './new-chats.js';

/**
 * What a bad externalId is told, and, word for word, what one another account already holds is
 * told too (CONTRACT §3): the two answers are identical, so nobody learns that an id is taken,
 * let alone by whom.
 */
export const EXTERNAL_ID_RULE = 'expected 1–128 letters, digits, dot, dash or underscore, not registered by another account';

// An external id goes into the HTTP platform's URL path (/v1/accounts/{externalId}/…): only
// characters that cannot start a new path segment, query or host, and never `.` or `..`.
const externalId = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,128}$/, EXTERNAL_ID_RULE)
  .refine((v) => !/^\.+$/.test(v), 'must not be only dots');

const maxSendPerMinute = z.number().int().min(1).max(60_000);
const groupConcurrency = z.number().int().min(1).max(50);

const botToken = text(1, 256).regex(/^\d{1,20}:[A-Za-z0-9_-]{20,200}$/, 'expected a Telegram bot token (123456:ABC…)');
const telegramCredentials = z.strictObject({ botToken });

// Sent as `Authorization: Bearer <apiKey>` (RFC 6750 token characters), so it must fit a header
// as is; at least 16 characters, so it is a secret worth the name (and long enough to be
// scrubbed by value from every error text, libs/core SecretScrubber).
const apiKey = z.string().regex(/^[A-Za-z0-9._~+/-]{16,512}=*$/, 'expected 16–512 letters, digits or . _ ~ + / - (then any =)');
const httpCredentials = z.strictObject({ apiKey: apiKey.describe('the key the HTTP platform issued for this account; sent as Authorization: Bearer') });

// The ban-safety kit (CONTRACT §3, accounts; docs/OPERATIONS.md "Keeping accounts safe").
const delaySeconds = z.number().int().min(0).max(86_400);
const sendDelaySeconds = z
  .strictObject({ min: delaySeconds, max: delaySeconds })
  .refine((d) => d.min <= d.max, { message: 'must be at least min', path: ['max'] })
  .describe('a uniform random wait between two sends of the account, whole seconds, on top of maxSendPerMinute');
const hourlyCap = z.number().int().min(1).max(1_000_000).describe('sends in any rolling hour');
const dailyCap = z.number().int().min(1).max(10_000_000).describe('sends in any rolling 24 hours');
const warmupStep = z.strictObject({
  afterDays: z.number().int().min(0).max(3_650),
  dailyCap: dailyCap.nullable().describe('null: the warm-up ends here'),
});
const warmupInput = z
  .strictObject({
    startedAt: timeInput.optional().describe('default: now'),
    steps: z
      .array(warmupStep)
      .min(1)
      .max(50)
      .refine((steps) => new Set(steps.map((x) => x.afterDays)).size === steps.length, 'afterDays must differ from step to step')
      .optional()
      .describe('default: 20 → 50 → 100 → 200 a day at days 0, 4, 8, 15; none from day 31'),
  })
  .describe("a daily cap that grows with the account's age; the effective daily cap is the lower of dailyCap and today's");
export type WarmupInput = z.infer<typeof warmupInput>;
// Typing first (CONTRACT §3, accounts): the chat sees the account typing before each message.
const typing = z
  .strictObject({
    charsPerSecond: z.number().int().min(1).max(1_000).describe('characters of text (a caption) typed per second'),
    maxSeconds: z.number().int().min(1).max(20).describe('the longest typing before one message; a media without caption types 1.5 s'),
  })
  .describe('whatsapp: presence "composing"; telegram: sendChatAction; inside the pace, never after a wait the platform imposed');
// Opt-out by reply (CONTRACT §3, accounts): whole replies, compared trimmed and case-insensitively.
const optOutKeywords = z
  .array(z.string().trim().min(1).max(64))
  .max(20)
  .describe(
    'whatsapp and telegram_user: a one-to-one reply that is one of these words (trimmed, any case) suppresses its chat; [] = off. Other platforms: [] only',
  );

// A proxy per account (CONTRACT §3, accounts; docs/platforms.md "Proxy"): the URL is a secret,
// sealed and never shown again; checked against the platform by the route (parseProxy).
const proxyInput = z
  .string()
  .max(2_048)
  .describe(
    'whatsapp and telegram_user: socks5://[user:password@]host:port or socks5h://… (the proxy resolves names); telegram_user also mtproxy://secret@host:port (32 hex digits, or dd and 32). Sealed like a credential, never returned: the account shows scheme, host and port. Other platforms: null only',
  );

// Always-connected accounts (CONTRACT §3, accounts: `connection`; docs/OPERATIONS.md).
const connection = z
  .enum(['always', 'on_demand'])
  .describe(
    "whatsapp and telegram_user: `always` keeps the account's one connection open on some sender whether or not a run sends, so receipts, replies and opt-outs arrive when they happen; `on_demand` opens it for its runs only. Other platforms hold no connection",
  );

const common = {
  name: text(1, 200),
  proxy: proxyInput.nullable().optional().describe('default none; see PATCH'),
  maxSendPerMinute: maxSendPerMinute.optional(),
  groupConcurrency: groupConcurrency.optional(),
  sendDelaySeconds: sendDelaySeconds.nullable().optional().describe('default: {min: 30, max: 60} for whatsapp, none for telegram and http; null: none'),
  hourlyCap: hourlyCap.nullable().optional(),
  dailyCap: dailyCap.nullable().optional(),
  warmup: warmupInput.nullable().optional(),
  optOutKeywords: optOutKeywords.optional().describe('default: ["STOP", "UNSUBSCRIBE"] for whatsapp and telegram_user, [] for telegram and http'),
  typing: typing.nullable().optional().describe('default: {charsPerSecond: 20, maxSeconds: 5} for whatsapp, none for telegram; http: null only'),
  tenantId: id.optional().describe('admin only: the tenant that owns the account'),
  ...limitInputs('default none'),
  connection: connection.optional().describe('default always'),
};

// Settling `unknown` (CONTRACT §3, accounts; §5): true only when the platform really drops a
// repeated Idempotency-Key, or a doubtful send may arrive twice.
const platformDeduplicates = z
  .boolean()
  .describe(
    'http: the platform answers a request whose Idempotency-Key it has seen as the first time, without delivering again; a send whose answer leaves delivery in doubt is then sent again with the same key (settledBy: platform) instead of left unknown. Always true for telegram_user (MTProto random_id)',
  );

export const createAccountBody = z.discriminatedUnion('platform', [
  z.strictObject({
    platform: z.literal('http'),
    externalId: externalId.describe("the account's id on the HTTP platform; one account per id"),
    credentials: httpCredentials,
    platformDeduplicates: platformDeduplicates.optional().describe('default false'),
    ...common,
  }),
  z.strictObject({
    platform: z.literal('telegram'),
    externalId: externalId.optional(),
    credentials: telegramCredentials,
    ...common,
  }),
  z.strictObject({ platform: z.literal('whatsapp'), externalId: externalId.optional(), ...common }),
  // A Telegram user account: created `pairing`, signed in with POST /v1/accounts/{id}/telegram-sign-in.
  z.strictObject({ platform: z.literal('telegram_user'), externalId: externalId.optional(), ...common }),
]);
export type CreateAccountBody = z.infer<typeof createAccountBody>;

export const patchAccountBody = z.strictObject({
  name: text(1, 200).optional(),
  status: z.enum(['active', 'disabled']).optional(),
  maxSendPerMinute: maxSendPerMinute.nullable().optional().describe('null: back to the default'),
  groupConcurrency: groupConcurrency.nullable().optional().describe('null: back to the default'),
  sendDelaySeconds: sendDelaySeconds.nullable().optional().describe('null: none'),
  hourlyCap: hourlyCap.nullable().optional().describe('null: none'),
  dailyCap: dailyCap.nullable().optional().describe('null: none'),
  warmup: warmupInput.nullable().optional().describe('null: none; a new object replaces the warm-up (startedAt defaults to now)'),
  optOutKeywords: optOutKeywords.optional().describe('replaces the list; [] = off'),
  typing: typing.nullable().optional().describe('null: none'),
  ...limitInputs('null: none'),
  platformDeduplicates: platformDeduplicates.optional().describe('http only'),
  connection: connection.optional(),
  proxy: proxyInput
    .nullable()
    .optional()
    .describe(
      'replaces the proxy (null: none); its last failure is forgotten and the next connection uses it. whatsapp and telegram_user: socks5://[user:password@]host:port, socks5h://…; telegram_user also mtproxy://secret@host:port',
    ),
  credentials: z
    .strictObject({ botToken: botToken.optional(), apiKey: apiKey.optional() })
    .optional()
    .describe(
      'telegram: {botToken}, a new bot token (after /revoke); http: {apiKey}, a new API key. A disconnected account becomes active again unless `status` says otherwise',
    ),
});

export const listAccountsQuery = z.object({ ...pageQuery });

export const account = z
  .object({
    id,
    tenantId: id,
    platform: z.enum(['http', 'telegram', 'telegram_user', 'whatsapp']),
    name: z.string(),
    externalId: z.string().nullable(),
    status: z.enum(['active', 'disabled', 'disconnected', 'pairing', 'cooling']),
    blockedUntil: time.nullable(),
    maxSendPerMinute: z.number().int().describe('effective pace: the default when the account sets none'),
    effectiveMaxSendPerMinute: z
      .number()
      .int()
      .describe('the pace the sender keeps now: maxSendPerMinute, lowered by automatic cooling and recovering step by step'),
    cooling: z
      .object({
        since: time,
        until: time
          .nullable()
          .describe('when the cooling ends by itself; null: no set end (reason restricted: only a lift ends it; not_delivering: a delivery receipt or a lift)'),
        reason: z
          .string()
          .describe(
            'flood_waits (the platform made it wait too often), failures (too many of its last sends failed) or restricted (WhatsApp refused a message with 463: no end) or *(extension)* not_delivering (none of its last sends got a delivery receipt: ends when one comes, or by a lift)',
          ),
        restrictedBecause: z
          .string()
          .nullable()
          .describe(
            '*(extension)* while `restricted`: which restriction — account_restricted (WhatsApp 463, Telegram PEER_FLOOD or USER_RESTRICTED), account_spam_limited (Telegram USER_BANNED_IN_CHANNEL in every group), account_frozen (Telegram froze the account); null otherwise',
          ),
        advice: z.string().nullable().describe('*(extension)* while `restricted`: what it is and what the operator does, in words; null otherwise'),
      })
      .nullable()
      .describe('set while the account is cooling; POST /v1/accounts/{id}/cooling/lift ends it'),
    groupConcurrency: z.number().int().describe('effective: the default when the account sets none'),
    sendDelaySeconds: z.object({ min: z.number().int(), max: z.number().int() }).nullable(),
    hourlyCap: z.number().int().nullable(),
    dailyCap: z.number().int().nullable(),
    warmup: z
      .object({
        startedAt: time,
        steps: z.array(z.object({ afterDays: z.number().int(), dailyCap: z.number().int().nullable() })),
        capToday: z.number().int().nullable().describe("today's warm-up cap; null once the warm-up is over"),
      })
      .nullable(),
    optOutKeywords: z.array(z.string()).describe('replies that suppress their chat (whatsapp, telegram_user); [] = off'),
    typing: z.object({ charsPerSecond: z.number().int(), maxSeconds: z.number().int() }).nullable(),
    ...limitViews(),
    platformDeduplicates: z.boolean().describe('*(extension)* http: doubtful sends are settled by sending again with the same Idempotency-Key'),
    connection: connection.describe(`*(extension)* ${connection.description}`),
    receipts: z
      .enum(['supported', 'unsupported'])
      .describe(
        '*(extension)* whether its platform tells delivery and read receipts (whatsapp; http through POST /v1/platform/receipts); unsupported (telegram bots): deliveredAt and readAt stay null',
      ),
    directory: directoryState.describe("*(extension)* where the account's chat directory sync stands; `never` before its first sync"),
    proxy: z
      .object({
        scheme: z.enum(['socks5', 'socks5h', 'mtproxy']),
        host: z.string(),
        port: z.number().int(),
        authenticated: z.boolean().describe('it signs in to the proxy (a user and password, or an MTProxy secret); neither is ever shown'),
        failure: z
          .object({
            message: z.string().describe('what the proxy answered, naming host:port (never the login)'),
            at: time,
          })
          .nullable()
          .describe(
            'set when the last connection through the proxy was refused or failed: the account sends nothing until one opens (runs wait, reason proxy_failed); null once one opens or the proxy is changed',
          ),
      })
      .nullable()
      .describe('*(extension)* whatsapp, telegram_user: the proxy it connects through; null: none'),
    newChats,
    createdAt: time,
  })
  .meta({ id: 'Account' });

export const accountPage = pageOf(account);

/** Pace defaults shown for accounts that set none. */
export interface PaceDefaults {
  maxSendPerMinute: number;
  groupConcurrency: number;
  /** how a cooled account's pace recovers (COOLING_*); absent: the defaults */
  cooling?: CoolingSettings;
}

export function accountView(a: AccountRow, defaults: PaceDefaults, now: Date = new Date()): z.output<typeof account> {
  return {
    id: a.id,
    tenantId: a.tenantId,
    platform: a.platform,
    name: a.name,
    externalId: a.externalId,
    status: a.status,
    blockedUntil: isoOrNull(a.blockedUntil),
    maxSendPerMinute: a.maxSendPerMinute ?? defaults.maxSendPerMinute,
    effectiveMaxSendPerMinute: effectivePerMinute(
      a.maxSendPerMinute ?? defaults.maxSendPerMinute,
      paceFactorAt(a.paceFactor, a.paceSince?.getTime() ?? null, now.getTime(), defaults.cooling ?? DEFAULT_COOLING),
    ),
    cooling: a.cooling && {
      since: iso(a.cooling.since),
      until: a.cooling.until && iso(a.cooling.until),
      reason: a.cooling.reason,
      restrictedBecause: a.cooling.restrictedBecause,
      advice: a.cooling.reason === 'restricted' ? sentence(restrictionWords(a.cooling.restrictedBecause, a.platform)) : null,
    },
    groupConcurrency: a.groupConcurrency ?? defaults.groupConcurrency,
    sendDelaySeconds: a.sendDelaySeconds,
    hourlyCap: a.hourlyCap,
    dailyCap: a.dailyCap,
    warmup: a.warmup && {
      startedAt: iso(new Date(a.warmup.startedAt)),
      steps: a.warmup.steps,
      capToday: warmupCapToday({ startedAt: new Date(a.warmup.startedAt), steps: a.warmup.steps }, now),
    },
    optOutKeywords: a.optOutKeywords,
    typing: a.typing,
    ...limitValuesView(a.limits),
    platformDeduplicates: a.platformDeduplicates,
    connection: a.connection,
    receipts: a.platform === 'telegram' ? 'unsupported' : 'supported',
    directory: directoryStateView(a.directory),
    proxy: a.proxy && {
      scheme: a.proxy.scheme,
      host: a.proxy.host,
      port: a.proxy.port,
      authenticated: a.proxy.authenticated,
      failure: a.proxy.failure && { message: a.proxy.failure.message, at: iso(a.proxy.failure.at) },
    },
    newChats: newChatsView(a.newChats, now),
    createdAt: iso(a.createdAt),
  };
}

// An account's suppression list (CONTRACT §3, accounts): chats it does not write to again.
export const suppressionParams = z.object({ id, chatId });
export const listSuppressionsQuery = z.object({ ...pageQuery });
export const addSuppressionsBody = z.strictObject({
  chatIds: z.array(chatId).min(1).max(1_000).describe('chats to add; those already listed keep their reason'),
});
export const suppression = z
  .object({
    chatId: z.string(),
    reason: z
      .string()
      .describe(
        "the platform's answer that suppressed it (chat_not_found, forbidden, bot_blocked, bot_kicked), opt_out (the chat replied an opt-out keyword), or operator",
      ),
    createdAt: time,
  })
  .meta({ id: 'Suppression' });
export const suppressionPage = pageOf(suppression);
export const suppressionsAdded = z.object({ added: z.number().int().describe('chats that were not on the list') });

/** A phrase as a sentence: capitalised, ending with the resume that follows a lift. */
function sentence(phrase: string): string {
  return `${phrase.charAt(0).toUpperCase()}${phrase.slice(1)}, then resume.`;
}
