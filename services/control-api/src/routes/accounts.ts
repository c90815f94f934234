import { DEFAULT_WARMUP_STEPS, parseProxy, processSecrets, proxyShown, seal } from '@metronome/core';
import { AccountCoolingRepository, type AccountStatus, type AccountWarmup } from '@metronome/db';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ownerFor, scopeOf } from '../caller.js';
import type { ApiContext } from '../context.js';
import { decodeChatCursor, decodePosition, encodeChatCursor, encodePosition, pageOf } from '../cursor.js';
import { conflict, invalidField, notFound } from '../errors.js';
import { ACCOUNT_PLATFORMS, accountDefaultsList, newAccountDefaults } from '../schemas/account-defaults.js';
import { limitChanges } from '../schemas/account-limits.js';
import {
  accountPage,
  accountView,
  account,
  addSuppressionsBody,
  createAccountBody,
  listSuppressionsQuery,
  suppressionPage,
  suppressionParams,
  suppressionsAdded,
  EXTERNAL_ID_RULE,
  listAccountsQuery,
  patchAccountBody,
  type CreateAccountBody,
  type WarmupInput,
} from '../schemas/accounts.js';
import { z } from 'zod';
import { errorResponses, idParams } from '../schemas/common.js';

/** Messaging accounts. Credentials go in sealed and never come out. */
export const accountRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const defaults = { maxSendPerMinute: ctx.config.defaultMaxSendPerMinute, groupConcurrency: ctx.config.defaultGroupConcurrency, cooling: ctx.config.cooling };
  const cooling = new AccountCoolingRepository(ctx.db);

  app.post(
    '/accounts',
    {
      schema: {
        operationId: 'createAccount',
        tags: ['accounts'],
        summary: 'Create an account',
        body: createAccountBody,
        response: { 201: account, ...errorResponses() },
      },
    },
    async (req, reply) => {
      const body = req.body;
      const tenantId = ownerFor(req.caller, body.tenantId);
      if (req.caller.admin && !(await ctx.tenants.exists(tenantId))) throw invalidField('tenantId', 'no such tenant');
      checkOptOutKeywords(body.platform, body.optOutKeywords);
      checkTyping(body.platform, body.typing);
      const proxy = sealedProxy(body.platform, body.proxy, ctx.config.secretsKey);
      // what the POST leaves out: the platform's defaults, as GET /v1/account-defaults answers them
      const given = newAccountDefaults(body.platform, defaults);
      const created = await ctx.accounts.create({
        tenantId,
        platform: body.platform,
        name: body.name,
        externalId: body.externalId ?? null,
        credentials: sealedCredentials(body, ctx.config.secretsKey),
        status: initialStatus(body),
        maxSendPerMinute: body.maxSendPerMinute ?? null,
        groupConcurrency: body.groupConcurrency ?? null,
        ...(proxy && { proxy }),
        safety: {
          // Absent: the platform's default (WhatsApp's human pacing); null: none.
          sendDelaySeconds: body.sendDelaySeconds === undefined ? given.sendDelaySeconds : body.sendDelaySeconds,
          hourlyCap: body.hourlyCap ?? null,
          dailyCap: body.dailyCap ?? null,
          warmup: storedWarmup(body.warmup, ctx.now()),
          optOutKeywords: body.optOutKeywords ?? given.optOutKeywords,
          typing: body.typing === undefined ? given.typing : body.typing,
          limits: limitChanges(body),
          // telegram_user: a repeated random_id is answered with the first send's message, so a doubtful send is settled by sending again.
          platformDeduplicates: body.platform === 'http' ? (body.platformDeduplicates ?? false) : body.platform === 'telegram_user',
          connection: body.connection ?? 'always',
        },
      });
      // Taken by another account, of this tenant or any other: the very answer a malformed id gets.
      if (!created) throw invalidField('externalId', EXTERNAL_ID_RULE);
      // An http account's chat directory fills by itself (CONTRACT §3, "Chat directory").
      const directory = created.platform === 'http' ? await firstSync(created.id) : created.directory;
      return reply.code(201).send(accountView({ ...created, directory }, defaults, ctx.now()));
    },
  );

  app.get(
    '/account-defaults',
    {
      schema: {
        operationId: 'getAccountDefaults',
        tags: ['accounts'],
        summary: 'What a new account of each platform gets for each setting its POST leaves out (pace, human gap, warm-up steps…)',
        response: { 200: accountDefaultsList, ...errorResponses() },
      },
    },
    async () => ({ items: ACCOUNT_PLATFORMS.map((platform) => newAccountDefaults(platform, defaults)) }),
  );

  app.get(
    '/accounts',
    {
      schema: {
        operationId: 'listAccounts',
        tags: ['accounts'],
        summary: 'List accounts, newest first',
        querystring: listAccountsQuery,
        response: { 200: accountPage, ...errorResponses() },
      },
    },
    async (req) => {
      const { limit, cursor } = req.query;
      const before = cursor === undefined ? undefined : decodePosition(cursor);
      const rows = await ctx.accounts.list(scopeOf(req.caller), { limit: limit + 1, before });
      const page = pageOf(rows, limit, (a) => encodePosition({ at: a.cursorAt, id: a.id }));
      return { items: page.rows.map((a) => accountView(a, defaults, ctx.now())), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/accounts/:id',
    { schema: { operationId: 'getAccount', tags: ['accounts'], summary: 'One account', params: idParams, response: { 200: account, ...errorResponses(404) } } },
    async (req) => {
      const found = await ctx.accounts.find(req.params.id, scopeOf(req.caller));
      if (!found) throw notFound('account');
      return accountView(found, defaults, ctx.now());
    },
  );

  app.patch(
    '/accounts/:id',
    {
      schema: {
        operationId: 'updateAccount',
        tags: ['accounts'],
        summary: 'Change name, status, pace or credentials (telegram bot token, http API key); a new pace applies from the next send, also to runs in progress',
        params: idParams,
        body: patchAccountBody,
        response: { 200: account, ...errorResponses(404) },
      },
    },
    async (req) => {
      const { credentials, warmup, proxy, ...changes } = req.body;
      let replaced: { credentials?: Buffer; status?: AccountStatus } = {};
      // The platform decides whether opt-out keywords apply: only a non-empty list needs it.
      const needsCurrent =
        credentials ||
        changes.status === 'active' ||
        (changes.optOutKeywords?.length ?? 0) > 0 ||
        Boolean(changes.typing) ||
        changes.platformDeduplicates === true ||
        typeof proxy === 'string';
      const current = needsCurrent ? await ctx.accounts.find(req.params.id, scopeOf(req.caller)) : null;
      if (needsCurrent && !current) throw notFound('account');
      if (current) checkOptOutKeywords(current.platform, changes.optOutKeywords);
      if (current) checkTyping(current.platform, changes.typing);
      if (changes.platformDeduplicates && current?.platform !== 'http') {
        throw invalidField('platformDeduplicates', `a ${current?.platform} account's platform is not known to drop repeated requests: only false is accepted`);
      }
      // A disconnected WhatsApp account was logged out or never paired: only pairing brings it back.
      if (changes.status === 'active' && current?.platform === 'whatsapp' && (current.status === 'disconnected' || current.status === 'pairing')) {
        throw conflict(`this WhatsApp account is ${current.status}: pair it with POST /v1/accounts/${current.id}/pair`);
      }
      // A signed-out Telegram user account comes back by signing in, never by a status.
      if (changes.status === 'active' && current?.platform === 'telegram_user' && (current.status === 'disconnected' || current.status === 'pairing')) {
        throw conflict(`this Telegram account is ${current.status}: sign it in with POST /v1/accounts/${current.id}/telegram-sign-in`);
      }
      // Setting a cooling account active is lifting its cooling (POST …/cooling/lift).
      if (changes.status === 'active' && current?.status === 'cooling') await cooling.lift(current.id, scopeOf(req.caller), ctx.now());
      if (credentials && current) {
        const secret = replacementCredentials(current.platform, credentials);
        // A new token or key is how a disconnected account (token revoked, key refused) comes back.
        replaced = { credentials: seal(JSON.stringify(secret), ctx.config.secretsKey), ...(current.status === 'disconnected' && { status: 'active' }) };
      }
      // null takes the proxy away, whatever the platform; a URL is checked against it
      const newProxy = proxy === undefined ? undefined : current ? sealedProxy(current.platform, proxy, ctx.config.secretsKey) : null;
      const updated = await ctx.accounts.update(
        req.params.id,
        scopeOf(req.caller),
        {
          ...replaced,
          ...changes,
          limits: limitChanges(changes),
          ...(warmup !== undefined && { warmup: storedWarmup(warmup, ctx.now()) }),
          ...(newProxy !== undefined && { proxy: newProxy }),
        },
        ctx.now(),
      );
      if (!updated) throw notFound('account');
      // A new API key syncs an http account's chat directory again (the last sync may have been refused).
      const directory = credentials && updated.platform === 'http' ? await firstSync(updated.id) : updated.directory;
      return accountView({ ...updated, directory }, defaults, ctx.now());
    },
  );

  app.post(
    '/accounts/:id/cooling/lift',
    {
      schema: {
        operationId: 'liftAccountCooling',
        tags: ['accounts'],
        summary:
          'Ends an automatic cooling now: the account is active again, its lowered pace recovering from now; also ends a WhatsApp 463 hold on its new chats (newChats.held new_chats_refused); 409 when neither holds it',
        params: idParams,
        response: { 200: account, ...errorResponses(404, 409) },
      },
    },
    async (req) => {
      const found = await ownAccount(req.caller, req.params.id);
      if (!(await cooling.lift(found.id, scopeOf(req.caller), ctx.now())))
        throw conflict(`the account is ${found.status}, not cooling, and its new chats are not held`);
      return accountView(await ownAccount(req.caller, req.params.id), defaults, ctx.now());
    },
  );

  /** Asks for a directory sync of a new or re-keyed http account; the account stands without it (POST …/chats/sync asks again). */
  const firstSync = (accountId: string) =>
    ctx.directorySyncs.request(accountId, ctx.now()).catch((err: unknown) => {
      ctx.logger.warn({ err, accountId }, 'could not ask for the first chat directory sync');
      return null;
    });

  /** The account, when the caller may see it; 404 otherwise. */
  const ownAccount = async (caller: Parameters<typeof scopeOf>[0], id: string) => {
    const found = await ctx.accounts.find(id, scopeOf(caller));
    if (!found) throw notFound('account');
    return found;
  };

  app.get(
    '/accounts/:id/suppressions',
    {
      schema: {
        operationId: 'listSuppressions',
        tags: ['accounts'],
        summary: "The account's suppression list, in chat order: chats its runs skip (code suppressed)",
        params: idParams,
        querystring: listSuppressionsQuery,
        response: { 200: suppressionPage, ...errorResponses(404) },
      },
    },
    async (req) => {
      await ownAccount(req.caller, req.params.id);
      const { limit, cursor } = req.query;
      const rows = await ctx.accounts.suppressions(req.params.id, { limit: limit + 1, afterChat: cursor === undefined ? undefined : decodeChatCursor(cursor) });
      const page = pageOf(rows, limit, (r) => encodeChatCursor(r.chatId));
      return { items: page.rows.map((r) => ({ chatId: r.chatId, reason: r.reason, createdAt: r.createdAt.toISOString() })), nextCursor: page.nextCursor };
    },
  );

  app.post(
    '/accounts/:id/suppressions',
    {
      schema: {
        operationId: 'addSuppressions',
        tags: ['accounts'],
        summary: 'Adds chats to the suppression list (reason operator); runs that start or resume from now skip them',
        params: idParams,
        body: addSuppressionsBody,
        response: { 200: suppressionsAdded, ...errorResponses(404) },
      },
    },
    async (req) => {
      await ownAccount(req.caller, req.params.id);
      return { added: await ctx.accounts.suppress(req.params.id, [...new Set(req.body.chatIds)], 'operator', ctx.now()) };
    },
  );

  app.delete(
    '/accounts/:id/suppressions/:chatId',
    {
      schema: {
        operationId: 'removeSuppression',
        tags: ['accounts'],
        summary: 'Takes a chat off the suppression list',
        params: suppressionParams,
        response: { 204: z.undefined().describe('removed'), ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      await ownAccount(req.caller, req.params.id);
      if (!(await ctx.accounts.unsuppress(req.params.id, req.params.chatId))) throw notFound('suppression');
      return reply.code(204).send();
    },
  );
};

/**
 * Only WhatsApp and telegram_user accounts read replies: a non-empty list for another platform would
 * promise an opt-out that never happens, so it is refused (400 naming the field) rather than ignored.
 */
function checkOptOutKeywords(platform: string, keywords: string[] | undefined): void {
  if (keywords?.length && platform !== 'whatsapp' && platform !== 'telegram_user')
    throw invalidField('optOutKeywords', `a ${platform} account reads no replies: only [] is accepted`);
}

/** The HTTP platform has no typing indicator: typing there would promise what never shows. */
function checkTyping(platform: string, typing: object | null | undefined): void {
  if (typing && platform === 'http') throw invalidField('typing', 'the http platform shows no typing: only null is accepted');
}

/**
 * A proxy as stored (docs/platforms.md, "Proxy"): the URL sealed, and what the account shows of
 * it; null for none. A URL the platform cannot use is a 400 naming `proxy`, never quoting it.
 */
function sealedProxy(platform: string, url: string | null | undefined, key: Buffer): { sealed: Buffer; shown: ReturnType<typeof proxyShown> } | null {
  if (url === null || url === undefined) return null;
  const parsed = parseProxy(url, platform);
  if ('error' in parsed) throw invalidField('proxy', parsed.error);
  // held from here on: scrubbed by value from what this process logs
  for (const secret of [parsed.password, parsed.secret, url]) if (secret) processSecrets().add(secret);
  return { sealed: seal(url, key), shown: proxyShown(parsed) };
}

/** A warm-up as stored: its start (now when not given) and its steps (the documented ramp when not given). */
function storedWarmup(w: WarmupInput | null | undefined, now: Date): AccountWarmup | null {
  if (!w) return null;
  return { startedAt: w.startedAt ? new Date(w.startedAt).toISOString() : now.toISOString(), steps: w.steps ?? DEFAULT_WARMUP_STEPS.map((s) => ({ ...s })) };
}

// The sender opens this with the same SECRETS_KEY: JSON `{"botToken": "…"}` or `{"apiKey": "…"}`.
function sealedCredentials(body: CreateAccountBody, key: Buffer): Buffer | null {
  if (body.platform === 'telegram') return seal(JSON.stringify(heldSecret({ botToken: body.credentials.botToken })), key);
  if (body.platform === 'http') return seal(JSON.stringify(heldSecret({ apiKey: body.credentials.apiKey })), key);
  return null;
}

/** The credentials a PATCH gives, checked against the account's platform; a 400 naming the field otherwise. */
function replacementCredentials(platform: string, given: { botToken?: string | undefined; apiKey?: string | undefined }): Record<string, string> {
  const wanted = platform === 'telegram' ? 'botToken' : platform === 'http' ? 'apiKey' : null;
  if (wanted === null) throw invalidField('credentials', `a ${platform} account takes no credentials`);
  for (const field of ['botToken', 'apiKey'] as const) {
    if (field !== wanted && given[field] !== undefined) throw invalidField(`credentials.${field}`, `a ${platform} account takes credentials.${wanted}`);
  }
  const value = given[wanted];
  if (value === undefined) throw invalidField(`credentials.${wanted}`, `required for a ${platform} account`);
  return heldSecret({ [wanted]: value });
}

/** This process now holds these secrets: from here on they are scrubbed by value from what it logs. */
function heldSecret<T extends Record<string, string>>(secret: T): T {
  for (const value of Object.values(secret)) {
    processSecrets().add(value);
    // a bot token's secret part alone, as a Bot API error may quote it without the bot id
    processSecrets().add(value.slice(value.indexOf(':') + 1));
  }
  return secret;
}

// A WhatsApp account cannot send before it is paired, a Telegram user account before it signs in.
function initialStatus(body: CreateAccountBody): AccountStatus {
  return body.platform === 'whatsapp' ? 'disconnected' : body.platform === 'telegram_user' ? 'pairing' : 'active';
}
