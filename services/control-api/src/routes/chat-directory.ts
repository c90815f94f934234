import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { scopeOf } from '../caller.js';
import type { ApiContext } from '../context.js';
import { decodeDirectoryCursor, encodeDirectoryCursor, pageOf } from '../cursor.js';
import { notFound } from '../errors.js';
import { chatParams, directoryEntryView, directoryPage, directoryState, directoryStateView, listChatsQuery } from '../schemas/chat-directory.js';
import { errorResponses } from '../schemas/common.js';

/** An account's chat directory (CONTRACT §3, "Chat directory"): list, search, sync. */
export const chatDirectoryRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const syncs = ctx.directorySyncs;
  app.addHook('onClose', () => syncs.close());

  const ownAccount = async (caller: Parameters<typeof scopeOf>[0], id: string) => {
    const found = await ctx.accounts.find(id, scopeOf(caller));
    if (!found) throw notFound('account');
    return found;
  };

  app.get(
    '/accounts/:id/chats',
    {
      schema: {
        operationId: 'listAccountChats',
        tags: ['accounts'],
        summary: "The account's chat directory in title order: search by title or chat id (any case, accents folded), filter by kind and canSend",
        params: chatParams,
        querystring: listChatsQuery,
        response: { 200: directoryPage, ...errorResponses(404) },
      },
    },
    async (req) => {
      const { query, kind, canSend, limit, cursor } = req.query;
      const after = cursor === undefined ? undefined : decodeDirectoryCursor(cursor);
      // the account's check and the search side by side; rows of an account the caller may not see are never answered
      const [, rows] = await Promise.all([
        ownAccount(req.caller, req.params.id),
        syncs.directory.list(req.params.id, { query, kind, canSend, limit: limit + 1, after }),
      ]);
      const page = pageOf(rows, limit, (r) => encodeDirectoryCursor(r.sortKey, r.chatId));
      return { items: page.rows.map(directoryEntryView), nextCursor: page.nextCursor };
    },
  );

  app.post(
    '/accounts/:id/chats/sync',
    {
      schema: {
        operationId: 'syncAccountChats',
        tags: ['accounts'],
        summary:
          "Syncs the account's chat directory from its platform, in the background: 202 `syncing`; progress as `directory` events on /v1/events and on the account",
        params: chatParams,
        response: { 202: directoryState, ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      await ownAccount(req.caller, req.params.id);
      const state = await syncs.request(req.params.id, ctx.now());
      return reply.code(202).send(directoryStateView(state));
    },
  );
};
