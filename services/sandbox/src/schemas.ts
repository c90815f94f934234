// Request bodies of the platform protocol (CONTRACT §5) and of the /sandbox control API.
import { z } from '@metronome/config';

const part = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string().min(1).max(65_536) }),
  z.object({ type: z.literal('media'), mediaRef: z.string().min(1).max(256), caption: z.string().max(65_536).nullish() }),
]);

export const sendBody = z
  .object({
    chatId: z.string().min(1).max(256),
    part,
    partIndex: z.number().int().min(0),
    partCount: z.number().int().min(1).max(1000),
  })
  .refine((b) => b.partIndex < b.partCount, { message: 'partIndex must be below partCount', path: ['partIndex'] });

/** Percent-encoded (CONTRACT §5), so a 256-character chat id of any script fits (2,400 at most). */
export const idempotencyKey = z.string().min(1).max(4_096);

const seconds = z.number().min(0).max(86_400);
// The ban model's hidden limits (ban-model.ts); 0 turns one off.
const banCount = z.number().int().min(0).max(10_000_000);
const banGap = z.number().int().min(0).max(86_400_000);

// Strict objects: a misspelt setting in a test should fail loudly, not be ignored.
export const configPatch = z
  .strictObject({
    latencyMs: z.number().int().min(0).max(600_000),
    maxPerMinute: z.number().int().min(0).max(6_000_000),
    burst: z.number().int().min(1).max(100_000),
    slowModeSeconds: seconds,
    faultRate: z.number().min(0).max(1),
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1),
    banHourlyCap: banCount,
    banDailyCap: banCount,
    banMinGapMs: banGap,
  })
  .partial();

export const accountPatch = z
  .strictObject({
    maxPerMinute: z.number().int().min(0).max(6_000_000).nullable(),
    burst: z.number().int().min(1).max(100_000).nullable(),
    slowModeSeconds: seconds.nullable(),
    unauthorized: z.boolean(),
    floodWaitSeconds: z.number().int().min(0).max(86_400).nullable(),
    /** the account's API key, set ahead of its first request; null forgets it (the next request registers one) */
    apiKey: z.string().min(1).max(4_096).nullable(),
    /** a fake fault: answers quote the request's Authorization header (api-keys.ts) */
    fakeEchoAuthorization: z.boolean(),
    banHourlyCap: banCount.nullable(),
    banDailyCap: banCount.nullable(),
    banMinGapMs: banGap.nullable(),
    /** a repeated Idempotency-Key answered as the first time (true, the default) or delivered again (false) */
    deduplicates: z.boolean(),
  })
  .partial();

export const chatPatch = z
  .strictObject({
    error: z.enum(['chat_not_found', 'forbidden', 'message_invalid']).nullable(),
    slowModeSeconds: seconds.nullable(),
    failNext: z.number().int().min(0).max(1_000_000),
    hangNextMs: z.number().int().min(0).max(600_000),
  })
  .partial();

export const receiptsPatch = z
  .strictObject({
    url: z.url().nullable(),
    deliveredAfterMs: z
      .number()
      .int()
      .min(0)
      .max(30 * 86_400_000),
    readAfterMs: z
      .number()
      .int()
      .min(0)
      .max(30 * 86_400_000)
      .nullable(),
    readShare: z.number().min(0).max(1),
    lateByMs: z.number().int().min(0).max(86_400_000),
    twice: z.boolean(),
    outOfOrder: z.boolean(),
    stoppedAccounts: z.array(z.string().min(1).max(256)).max(10_000),
    batchSize: z.number().int().min(1).max(1000),
    flushMs: z.number().int().min(0).max(60_000),
    accountsPerPost: z.number().int().min(1).max(1000),
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1),
  })
  .partial();

export const listQuery = z.object({ account: z.string().optional(), chat: z.string().optional() });

/** One line per problem, naming the field. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
}

/** `PUT /sandbox/accounts/:account/directory`: the account's chats, or null for none (its listing answers 404). */
export const directoryBody = z.strictObject({
  chats: z
    .array(
      z.strictObject({
        chatId: z.string().min(1).max(256),
        title: z.string().max(200).nullable(),
        kind: z.enum(['group', 'direct']),
        memberCount: z.number().int().min(0).max(10_000_000).nullable(),
        canSend: z.boolean(),
      }),
    )
    .max(100_000)
    .nullable(),
  /** most entries per page (paging tests) */
  pageSize: z.number().int().min(1).max(500).optional(),
});
