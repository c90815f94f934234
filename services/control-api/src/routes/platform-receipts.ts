import { hashToken, open } from '@metronome/core';
import { ReceiptRepository } from '@metronome/db';
import { countReceipts } from '@metronome/observability';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiContext } from '../context.js';
import { unauthorized } from '../errors.js';
import { ReceiptIngest } from '../receipt-ingest.js';
import { chatId, errorResponses, text, timeInput } from '../schemas/common.js';

// The http platform protocol's receipts (CONTRACT §5, protocol extension): the platform tells
// which messages were delivered and read, authenticated by the account's own API key.

export const receiptsBody = z
  .strictObject({
    receipts: z
      .array(
        z.strictObject({
          messageId: text(1, 128).describe('the id the platform answered the send with'),
          chatId: chatId.describe('the chat the message was sent to, as the send named it'),
          status: z.enum(['delivered', 'read']).describe('read is a delivery too'),
          at: timeInput.describe('when it was delivered / read, as the platform knows it'),
        }),
      )
      .min(1)
      .max(1000),
  })
  .meta({ id: 'PlatformReceipts' });

export const receiptsAnswer = z
  .object({
    recorded: z.number().int().describe("receipts naming a sent message of the key's account"),
    ignored: z.number().int().describe("receipts naming no sent message of the key's account (unknown, not sent yet, or another account's): nothing changed"),
  })
  .meta({ id: 'PlatformReceiptsAnswer' });

const BEARER = /^Bearer[ \t]+([\x21-\x7e]{1,4096})[ \t]*$/i;
/** How long a key's account is trusted without looking again (a replaced key stops working within it). */
const KEYS_FRESH_MS = 60_000;
/** An unknown key looks again at most this often (guessed keys cannot make every request a scan). */
const MISS_RELOOK_MS = 2_000;

/** http accounts by the sha256 of their API key, read from their sealed credentials. */
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
  // The key first: a request without one is 401 whatever its body, as every /v1 route.
  const accountOf = new WeakMap<object, string>();
  app.addHook('onRequest', async (req) => {
    const key = BEARER.exec(req.headers.authorization ?? '')?.[1];
    const accountId = key === undefined ? null : await keys.accountOf(key);
    if (accountId === null) throw unauthorized("the account's API key is required as bearer");
    accountOf.set(req, accountId);
  });
  app.post(
    '/receipts',
    {
      // A platform posts receipts many times a second: no info line per post (its errors and
      // warnings are still logged; metronome_http_request_duration_seconds counts every post).
      logLevel: 'warn',
      schema: {
        operationId: 'postPlatformReceipts',
        tags: ['platform'],
        summary: "*(extension)* An http platform tells delivery and read receipts of the account's messages, with the account's API key as bearer",
        body: receiptsBody,
        response: { 200: receiptsAnswer, ...errorResponses(401) },
      },
    },
    async (req) => {
      const accountId = accountOf.get(req)!;
      const now = ctx.clock.now();
      // A receipt cannot be from the future: a platform's clock ahead of ours says now.
      const receipts = req.body.receipts.map((r) => ({
        messageId: r.messageId,
        chatId: r.chatId,
        status: r.status,
        at: new Date(Math.min(Date.parse(r.at), now)),
      }));
      const outcome = await ingest.submit({ accountId, receipts });
      countReceipts(ctx.metrics, 'http', { receipts, ...outcome });
      const recorded = outcome.matched.filter(Boolean).length;
      return { recorded, ignored: receipts.length - recorded };
    },
  );
};
