import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { scopeOf } from '../caller.js';
import type { ApiContext } from '../context.js';
import { runViews } from '../run-views.js';
import { errorResponses, idParams } from '../schemas/common.js';
import { run, testSendBody } from '../schemas/runs.js';
import { startTestSend } from '../test-send.js';

/** `POST /v1/campaigns/{id}/test-sends`: the campaign's message to one chat, before it goes live (CONTRACT, Send a test). */
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
};
