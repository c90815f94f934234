import { explainTarget } from '@metronome/core';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { scopeOf } from '../caller.js';
import type { ApiContext } from '../context.js';
import { decodePosition, decodeTargetCursor, encodePosition, encodeTargetCursor, pageOf } from '../cursor.js';
import { notFound } from '../errors.js';
import { cancelRun, pauseRun, resumeRun, retryFailedRun } from '../run-actions.js';
import { runViews } from '../run-views.js';
import { errorResponses, idParams } from '../schemas/common.js';
import { listRunsQuery, listTargetsQuery, run, runPage, targetPage, targetView } from '../schemas/runs.js';

/** Runs: reads, and the operator's commands (pause, resume, cancel, retry-failed). */
export const runRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const { explain, withCounts, one } = runViews(ctx);

  app.get(
    '/runs',
    {
      schema: {
        operationId: 'listRuns',
        tags: ['runs'],
        summary: 'List runs, newest first',
        querystring: listRunsQuery,
        response: { 200: runPage, ...errorResponses() },
      },
    },
    async (req) => {
      const { limit, cursor, status, campaignId, accountId, tenantId } = req.query;
      const before = cursor === undefined ? undefined : decodePosition(cursor);
      const scope = scopeOf(req.caller);
      // Another tenant's id finds nothing, exactly as another tenant's campaignId or accountId
      // does: the answer does not tell whether that tenant exists.
      if (tenantId !== undefined && scope !== null && tenantId !== scope) return { items: [], nextCursor: null };
      const rows = await ctx.runs.list({ tenantId: scope ?? tenantId ?? null, status, campaignId, accountId }, { limit: limit + 1, before });
      const page = pageOf(rows, limit, (r) => encodePosition({ at: r.cursorAt, id: r.id }));
      return { items: await withCounts(page.rows), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/runs/:id',
    { schema: { operationId: 'getRun', tags: ['runs'], summary: 'One run with its counts', params: idParams, response: { 200: run, ...errorResponses(404) } } },
    async (req) => {
      const found = await ctx.runs.find(req.params.id, scopeOf(req.caller));
      if (!found) throw notFound('run');
      return one(found);
    },
  );

  app.get(
    '/runs/:id/targets',
    {
      schema: {
        operationId: 'listRunTargets',
        tags: ['runs'],
        summary: "A run's targets in chat id order",
        params: idParams,
        querystring: listTargetsQuery,
        response: { 200: targetPage, ...errorResponses(404) },
      },
    },
    async (req) => {
      const { limit, cursor, status, delivered, read, replied } = req.query;
      const after = cursor === undefined ? undefined : decodeTargetCursor(cursor);
      const found = await ctx.runs.find(req.params.id, scopeOf(req.caller));
      if (!found) throw notFound('run');
      const [rows, explained] = await Promise.all([ctx.runs.listTargets(found.id, status, limit + 1, after, { delivered, read, replied }), explain([found])]);
      const page = pageOf(rows, limit, (t) => encodeTargetCursor(t.chatId, t.threadId ?? 0));
      const ofRun = explained.get(found.id);
      const now = ctx.now();
      const waitingOf = (t: (typeof rows)[number]) => (ofRun ? explainTarget(t, ofRun.explanation.waiting, ofRun.facts, now) : null);
      return { items: page.rows.map((t) => targetView(t, waitingOf(t))), nextCursor: page.nextCursor };
    },
  );

  const commands = [
    { path: 'pause', operationId: 'pauseRun', act: pauseRun, summary: 'queued | running → paused (pausedReason operator); no new send starts' },
    {
      path: 'resume',
      operationId: 'resumeRun',
      act: resumeRun,
      summary: "paused → queued: continues with its pending targets under the campaign's current window",
    },
    { path: 'cancel', operationId: 'cancelRun', act: cancelRun, summary: 'queued | running | paused → cancelled; pending targets become skipped' },
    {
      path: 'retry-failed',
      operationId: 'retryFailedRun',
      act: retryFailedRun,
      summary: 'finished run: failed and unknown targets back to pending, run queued again',
    },
  ] as const;
  for (const command of commands) {
    app.post(
      `/runs/:id/${command.path}`,
      {
        schema: {
          operationId: command.operationId,
          tags: ['runs'],
          summary: command.summary,
          params: idParams,
          response: { 202: run, ...errorResponses(404, 409) },
        },
      },
      async (req, reply) => {
        const changed = await command.act(ctx, req.params.id, scopeOf(req.caller));
        return reply.code(202).send(await one(changed));
      },
    );
  }
};
