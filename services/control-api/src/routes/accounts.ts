import { seal } from '@metronome/core';
import type { AccountStatus } from '@metronome/db';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ownerFor, scopeOf } from '../caller.js';
import type { ApiContext } from '../context.js';
import { decodePosition, encodePosition, pageOf } from '../cursor.js';
import { conflict, invalidField, notFound } from '../errors.js';
import { accountPage, accountView, account, createAccountBody, listAccountsQuery, patchAccountBody, type CreateAccountBody } from '../schemas/accounts.js';
import { errorResponses, idParams } from '../schemas/common.js';

/** Messaging accounts. Credentials go in sealed and never come out. */
export const accountRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const defaults = { maxSendPerMinute: ctx.config.defaultMaxSendPerMinute, groupConcurrency: ctx.config.defaultGroupConcurrency };

  app.post(
    '/accounts',
    { schema: { tags: ['accounts'], summary: 'Create an account', body: createAccountBody, response: { 201: account, ...errorResponses() } } },
    async (req, reply) => {
      const body = req.body;
      const tenantId = ownerFor(req.caller, body.tenantId);
      if (req.caller.admin && !(await ctx.tenants.exists(tenantId))) throw invalidField('tenantId', 'no such tenant');
      const created = await ctx.accounts.create({
        tenantId,
        platform: body.platform,
        name: body.name,
        externalId: body.externalId ?? null,
        credentials: sealedCredentials(body, ctx.config.secretsKey),
        status: initialStatus(body),
        maxSendPerMinute: body.maxSendPerMinute ?? null,
        groupConcurrency: body.groupConcurrency ?? null,
      });
      return reply.code(201).send(accountView(created, defaults));
    },
  );

  app.get(
    '/accounts',
    { schema: { tags: ['accounts'], summary: 'List accounts, newest first', querystring: listAccountsQuery, response: { 200: accountPage, ...errorResponses() } } },
    async (req) => {
      const { limit, cursor } = req.query;
      const before = cursor === undefined ? undefined : decodePosition(cursor);
      const rows = await ctx.accounts.list(scopeOf(req.caller), { limit: limit + 1, before });
      const page = pageOf(rows, limit, (a) => encodePosition({ at: a.cursorAt, id: a.id }));
      return { items: page.rows.map((a) => accountView(a, defaults)), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/accounts/:id',
    { schema: { tags: ['accounts'], summary: 'One account', params: idParams, response: { 200: account, ...errorResponses(404) } } },
    async (req) => {
      const found = await ctx.accounts.find(req.params.id, scopeOf(req.caller));
      if (!found) throw notFound('account');
      return accountView(found, defaults);
    },
  );

  app.patch(
    '/accounts/:id',
    {
      schema: {
        tags: ['accounts'],
        summary: 'Change name, status, pace or (telegram) bot token; a new pace applies from the next send, also to runs in progress',
        params: idParams,
        body: patchAccountBody,
        response: { 200: account, ...errorResponses(404) },
      },
    },
    async (req) => {
      const { credentials, ...changes } = req.body;
      let replaced: { credentials?: Buffer; status?: AccountStatus } = {};
      const current = credentials || changes.status === 'active' ? await ctx.accounts.find(req.params.id, scopeOf(req.caller)) : null;
      if ((credentials || changes.status === 'active') && !current) throw notFound('account');
      // A disconnected WhatsApp account was logged out or never paired: only pairing brings it back.
      if (changes.status === 'active' && current?.platform === 'whatsapp' && (current.status === 'disconnected' || current.status === 'pairing')) {
        throw conflict(`this WhatsApp account is ${current.status}: pair it with POST /v1/accounts/${current.id}/pair`);
      }
      if (credentials && current) {
        if (current.platform !== 'telegram') throw invalidField('credentials', `a ${current.platform} account takes no credentials`);
        // A new token is how a disconnected bot (token revoked) comes back.
        replaced = { credentials: seal(JSON.stringify({ botToken: credentials.botToken }), ctx.config.secretsKey), ...(current.status === 'disconnected' && { status: 'active' }) };
      }
      const updated = await ctx.accounts.update(req.params.id, scopeOf(req.caller), { ...replaced, ...changes }, ctx.now());
      if (!updated) throw notFound('account');
      return accountView(updated, defaults);
    },
  );
};

// The sender opens this with the same SECRETS_KEY: JSON `{"botToken": "…"}`.
function sealedCredentials(body: CreateAccountBody, key: Buffer): Buffer | null {
  return body.platform === 'telegram' ? seal(JSON.stringify({ botToken: body.credentials.botToken }), key) : null;
}

// A WhatsApp account cannot send before it is paired.
function initialStatus(body: CreateAccountBody): AccountStatus {
  return body.platform === 'whatsapp' ? 'disconnected' : 'active';
}
