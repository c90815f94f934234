import { hashToken, open } from '@metronome/core';
import { ReceiptRepository } from '@metronome/db';
import { countReceipts, countUnknown } from '@metronome/observability';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiContext } from '../context.js';
import { unauthorized } from '../errors.js';
import { ReceiptIngest } from '../receipt-ingest.js';
import { chatId, errorResponses, text, timeInput } from '../schemas/common.js';

// The http platform's receipts (CONTRACT §5, protocol extension), authenticated by the account's own API key.

const receipt = z.strictObject({
  messageId: text(1, 128).describe('the id the platform answered the send with'),
  chatId: chatId.describe('the chat the message was sent to, as the send named it'),
  status: z.enum(['delivered', 'read']).describe('read is a delivery too'),
  at: timeInput.describe('when it was delivered / read, as the platform knows it'),
});
const MAX_RECEIPTS = 1000;

// One account's receipts with its key as bearer, or (extension) several accounts' groups, each with its key; each receipt is
// read against its own key's account.
export const receiptsBody = z
  .strictObject({
    receipts: z.array(receipt).min(1).max(MAX_RECEIPTS).optional().describe("one account's receipts, the bearer its API key"),
    accounts: z
      .array(
        z.strictObject({
          key: z
            .string()
            .regex(/^[\x21-\x7e]{1,4096}$/, 'must be 1–4096 printable ASCII characters')
            .describe("the account's API key (the key Metronome sends it)"),
          receipts: z.array(receipt).min(1).max(MAX_RECEIPTS),
        }),
      )
      .min(1)
      .max(MAX_RECEIPTS)
      .optional()
      .describe("*(extension)* several accounts' receipts, each group with its account's key; no bearer needed"),
  })
  .superRefine((b, ctx) => {
    if ((b.receipts === undefined) === (b.accounts === undefined))
      ctx.addIssue({ code: 'custom', path: [], message: 'exactly one of receipts and accounts is required' });
    else if (b.accounts && b.accounts.reduce((n, a) => n + a.receipts.length, 0) > MAX_RECEIPTS)
      ctx.addIssue({ code: 'custom', path: ['accounts'], message: `at most ${MAX_RECEIPTS} receipts in all` });
  })
  .meta({ id: 'PlatformReceipts', description: 'exactly one of `receipts` (the bearer form) and `accounts` (keys in the body)' });

const counts = {
  recorded: z.number().int().describe("receipts naming a sent message of the key's account"),
  ignored: z.number().int().describe("receipts naming no sent message of the key's account (unknown, not sent yet, or another account's): nothing changed"),
};
export const receiptsAnswer = z
  .object({
    ...counts,
    accounts: z
      .array(
        z.object({
          ...counts,
          keyKnown: z.boolean().describe("false: the key is no account's, its receipts all ignored"),
          ignoredIndexes: z.array(z.number().int()).describe("the ignored receipts' places in the group (0-based): what a platform may post again later"),
        }),
      )
      .optional()
      .describe('*(extension)* the form with accounts: per group, in its order'),
  })
  .meta({ id: 'PlatformReceiptsAnswer' });

const BEARER = /^Bearer[ \t]+([\x21-\x7e]{1,4096})[ \t]*$/i;
/** How long a key's account is trusted without looking again (a replaced key stops working within it). */
const KEYS_FRESH_MS = 60_000;
/** An unknown key looks again at most this often (guessed keys cannot make every request a scan). */
const MISS_RELOOK_MS = 2_000;

class AccountKeys {
  private byDigest = new Map<string, string>();
  private loadedAt = -Infinity;
  private loading: Promise<void> | null = null;

  constructor(
    private readonly ctx: ApiContext,
    private readonly repo: ReceiptRepository,
  ) {}

  async accountOf(key: string): Promise<string | null> {
    const digest = hashToken(key);
    const age = this.ctx.clock.now() - this.loadedAt;
    if (age > KEYS_FRESH_MS || (!this.byDigest.has(digest) && age > MISS_RELOOK_MS)) await this.load();
    return this.byDigest.get(digest) ?? null;
  }

  private load(): Promise<void> {
    this.loading ??= (async () => {
      const keys = [this.ctx.config.secretsKey, ...(this.ctx.config.secretsKeyPrevious ? [this.ctx.config.secretsKeyPrevious] : [])];
      const next = new Map<string, string>();
      for (const a of await this.repo.httpAccounts()) {
        try {
          const apiKey = (JSON.parse(open(a.credentials, keys).toString('utf8')) as { apiKey?: unknown }).apiKey;
          if (typeof apiKey === 'string') next.set(hashToken(apiKey), a.id);
        } catch {
          // credentials this replica cannot open: that account cannot post receipts here
        }
      }
      this.byDigest = next;
      this.loadedAt = this.ctx.clock.now();
    })().finally(() => (this.loading = null));
    return this.loading;
  }
}

export const platformReceiptRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const repo = new ReceiptRepository(ctx.db);
  const keys = new AccountKeys(ctx, repo);
  // posts that come while one is written go together in the next write
  const ingest = new ReceiptIngest({ write: (submissions) => repo.recordMany(submissions) });
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, security: [{ platformKey: [] }] };
  });
  // A bearer key that is no account's is 401 whatever the body; without a bearer, only the form with keys in the body is heard.
  const accountOf = new WeakMap<object, string>();
  app.addHook('onRequest', async (req) => {
    const header = req.headers.authorization;
    if (header === undefined) return;
    const key = BEARER.exec(header)?.[1];
    const accountId = key === undefined ? null : await keys.accountOf(key);
    if (accountId === null) throw unauthorized("the account's API key is required as bearer");
    accountOf.set(req, accountId);
  });
  app.addHook('preValidation', async (req) => {
    const body = req.body as { accounts?: unknown } | null;
    if (!accountOf.has(req) && (typeof body !== 'object' || body === null || !('accounts' in body)))
      throw unauthorized("the account's API key is required as bearer");
  });
  app.post(
    '/receipts',
    {
      // Platforms post receipts many times a second: no info line per post.
      logLevel: 'warn',
      schema: {
        operationId: 'postPlatformReceipts',
        tags: ['platform'],
        summary:
          "*(extension)* An http platform tells delivery and read receipts of its accounts' messages, with the account's API key as bearer or each group's key in the body",
        body: receiptsBody,
        response: { 200: receiptsAnswer, ...errorResponses(401) },
      },
    },
    async (req) => {
      const now = ctx.clock.now();
      const body = req.body;
      // one group per account: the bearer's, or each key's in the body (null: no account's key)
      const groups = body.receipts
        ? [{ accountId: accountOf.get(req) ?? null, receipts: body.receipts }]
        : await Promise.all(body.accounts!.map(async (a) => ({ accountId: await keys.accountOf(a.key), receipts: a.receipts })));
      const answers = await Promise.all(
        groups.map(async (g) => {
          if (g.accountId === null) {
            countUnknown(ctx.metrics, 'http', g.receipts.length);
            return { recorded: 0, ignored: g.receipts.length, keyKnown: false, ignoredIndexes: g.receipts.map((_, i) => i) };
          }
          // A receipt cannot be from the future: a platform's clock ahead of ours says now.
          const receipts = g.receipts.map((r) => ({
            messageId: r.messageId,
            chatId: r.chatId,
            status: r.status,
            at: new Date(Math.min(Date.parse(r.at), now)),
          }));
          const outcome = await ingest.submit({ accountId: g.accountId, receipts });
          countReceipts(ctx.metrics, 'http', { receipts, ...outcome });
          const ignoredIndexes: number[] = [];
          outcome.matched.forEach((m, i) => m || ignoredIndexes.push(i));
          return { recorded: receipts.length - ignoredIndexes.length, ignored: ignoredIndexes.length, keyKnown: true, ignoredIndexes };
        }),
      );
      let recorded = 0;
      let ignored = 0;
      for (const a of answers) {
        recorded += a.recorded;
        ignored += a.ignored;
      }
      return body.receipts ? { recorded, ignored } : { recorded, ignored, accounts: answers };
    },
  );
};
