import { ErasureRepository } from '@metronome/db';
import type { WhatsAppSocketPool } from '@metronome/transports/whatsapp';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ownerFor, scopeOf } from '../caller.js';
import type { AccountLogout, ApiContext } from '../context.js';
import { ApiError, notFound, unauthorized } from '../errors.js';
import { errorResponses, idParams } from '../schemas/common.js';
import { chatErased, deleteAccountQuery, eraseChatBody } from '../schemas/erasure.js';

/** Logs out through the socket pool; a sender holding the socket is asked to hand it over, so a few tries reach it. */
export const whatsappLogout =
  (pool: Pick<WhatsAppSocketPool, 'use'>, tries = 5, waitMs = 500): AccountLogout =>
  async (accountId) => {
    for (let i = 0; i < tries; i++) {
      const result = await pool.use(accountId, (socket) => socket.logout());
      if (result.ok) return true;
      if (result.reason !== 'busy') return false;
      await new Promise((done) => setTimeout(done, waitMs));
    }
    return false;
  };

const PURGE_BATCH = 1000;

/** Deletions (docs/CONTRACT.md, "Retention and deletion"): an account, a media file, a tenant, a chat across a tenant. */
export const erasureRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext; logout?: AccountLogout }> = async (app, { ctx, logout }) => {
  const erasure = new ErasureRepository(ctx.db);

  const purgeRuns = async (scope: { accountId: string } | { tenantId: string }): Promise<void> => {
    while ((await erasure.purgeRunsBatch(scope, PURGE_BATCH)).deleted > 0);
  };

  app.delete(
    '/accounts/:id',
    {
      schema: {
        operationId: 'deleteAccount',
        tags: ['accounts'],
        summary:
          'Log the session out, wipe its credentials and auth, delete its campaigns and cancel their open runs; history stays under retention unless purge=true',
        params: idParams,
        querystring: deleteAccountQuery,
        response: { 204: z.undefined().describe('deleted'), ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      const scope = scopeOf(req.caller);
      const account = await ctx.accounts.find(req.params.id, scope);
      if (!account) throw notFound('account');
      // the session first, while its keys still exist: the platform forgets the linked device
      if (logout && account.platform === 'whatsapp') {
        const done = await logout(account.id, account.platform).catch((err: unknown) => {
          ctx.logger.warn({ err, accountId: account.id }, 'whatsapp logout failed; the credentials are wiped anyway');
          return false;
        });
        if (!done)
          ctx.logger.warn(
            { accountId: account.id },
            'whatsapp session not logged out here (no socket, or another replica holds it); its credentials are wiped',
          );
      }
      if (!(await erasure.deleteAccount(account.id, scope, ctx.now()))) throw notFound('account');
      if (req.query.purge) {
        await purgeRuns({ accountId: account.id });
        await erasure.removeAccountRow(account.id);
      }
      return reply.code(204).send();
    },
  );

  app.delete(
    '/media/:id',
    {
      schema: {
        operationId: 'deleteMedia',
        tags: ['media'],
        summary: 'Delete a media file; 409 naming the campaigns that use it',
        params: idParams,
        response: { 204: z.undefined().describe('deleted'), ...errorResponses(404, 409) },
      },
    },
    async (req, reply) => {
      const users = await erasure.deleteMedia(req.params.id, scopeOf(req.caller));
      if (users === null) throw notFound('media');
      if (users.length > 0) {
        const named = users.map((c) => ({ field: `campaigns.${c.id}`, message: `campaign "${c.name}" sends this media` }));
        throw new ApiError(409, 'conflict', 'campaigns send this media: take it out of their messages (or delete them) first', named);
      }
      return reply.code(204).send();
    },
  );

  app.delete(
    '/tenants/:id',
    {
      schema: {
        operationId: 'deleteTenant',
        tags: ['tenants'],
        summary: 'Delete a tenant and everything of it (admin token only); its token stops working at once',
        params: idParams,
        response: { 204: z.undefined().describe('deleted'), ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      if (!req.caller.admin) throw unauthorized('deleting tenants requires the admin token');
      const tenantId = req.params.id;
      if (!(await erasure.markTenantDeleted(tenantId, ctx.now()))) throw notFound('tenant');
      ctx.deletedTenants.add(tenantId);
      // the rows go in batches; cut short, the scheduler's retention sweep finishes them
      await purgeRuns({ tenantId });
      while ((await erasure.purgeTenantBatch(tenantId, PURGE_BATCH)) > 0);
      return reply.code(204).send();
    },
  );

  app.post(
    '/chats/erase',
    {
      schema: {
        operationId: 'eraseChat',
        tags: ['chats'],
        summary: 'Erase a chat from the tenant: its campaigns, audiences, history and directory; only a salted hash stays, so it is never written to again',
        body: eraseChatBody,
        response: { 200: chatErased, ...errorResponses() },
      },
    },
    async (req) => {
      const tenantId = ownerFor(req.caller, req.body.tenantId);
      if (req.caller.admin && !(await ctx.tenants.exists(tenantId))) throw notFound('tenant');
      return erasure.eraseChat(tenantId, req.body.chatId, ctx.now());
    },
  );
};
