import { campaignChats } from '@metronome/db';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { scopeOf } from '../caller.js';
import type { ApiContext } from '../context.js';
import { decodeTargetCursor, encodeTargetCursor, pageOf } from '../cursor.js';
import { notFound } from '../errors.js';
import { runViews } from '../run-views.js';
import { campaignChatPage, campaignChatsQuery, campaignChatView } from '../schemas/campaign-chats.js';
import { errorResponses, idParams } from '../schemas/common.js';
import { run, testSendBody } from '../schemas/runs.js';
import { startTestSend } from '../test-send.js';

/**
 * `POST /v1/campaigns/{id}/test-sends`: the campaign's message to one chat, before it goes live
 * (CONTRACT, Send a test); `GET /v1/campaigns/{id}/chats`: its own chats by name, to render it as.
 */
export const testSendRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const runs = runViews(ctx);
  app.post(
    '/campaigns/:id/test-sends',
    {
      schema: {
        operationId: 'sendCampaignTest',
        tags: ['campaigns'],
        summary: "Send a test: the campaign's message, rendered for one of its chats, to one chat; a run of trigger test, never counted as the campaign's send",
        params: idParams,
        body: testSendBody,
        response: { 202: run, ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      const created = await startTestSend(ctx, req.params.id, scopeOf(req.caller), req.body);
      return reply.code(202).send(await runs.one(created));
    },
  );

  app.get(
    '/campaigns/:id/chats',
    {
      schema: {
        operationId: 'listCampaignChats',
        tags: ['campaigns'],
        summary: "The campaign's own chats (its targets, its audiences' members) in chat id order, each with its title and variables",
        params: idParams,
        querystring: campaignChatsQuery,
        response: { 200: campaignChatPage, ...errorResponses(404) },
      },
    },
    async (req) => {
      const { query, limit, cursor } = req.query;
      const after = cursor === undefined ? undefined : decodeTargetCursor(cursor);
      const c = await ctx.campaigns.find(req.params.id, scopeOf(req.caller));
      if (!c) throw notFound('campaign');
      const rows = await campaignChats(ctx.db, c.id, { query, limit: limit + 1, after });
      const page = pageOf(rows, limit, (r) => encodeTargetCursor(r.chatId, r.threadId ?? 0));
      return { items: page.rows.map(campaignChatView), nextCursor: page.nextCursor };
    },
  );
};
