import { randomUUID } from 'node:crypto';
import { firstOccurrence, rescheduledOccurrence } from '@metronome/core';
import { CampaignRepository, partsUseBuiltins, RunControlRepository, type CampaignChanges, type CampaignRow, type Schedule } from '@metronome/db';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { scopeOf } from '../caller.js';
import { campaignProblems, normaliseSchedule, type CampaignDraft } from '../campaign-rules.js';
import type { ApiContext } from '../context.js';
import { decodePosition, encodePosition, pageOf } from '../cursor.js';
import { notFound, validationFailed } from '../errors.js';
import { audienceProblems, checkNewCampaign, ownershipProblems, topicProblems, uploadLimitProblems } from '../new-campaign.js';
import { givenTargets, namedPersonalProblems, storedTargets } from '../personal-rules.js';
import { startManualRun } from '../run-actions.js';
import { runViews } from '../run-views.js';
import { createDueRun, planFirstRun, startCreatedRun } from '../instant-start.js';
import {
  campaign,
  campaignPage,
  campaignView,
  checkedCampaignView,
  createCampaignBody,
  listCampaignsQuery,
  patchCampaignBody,
  shownInstant,
} from '../schemas/campaigns.js';
import { errorResponses, idParams } from '../schemas/common.js';
import { run, runNowBody } from '../schemas/runs.js';

/** Campaigns, and `POST /v1/campaigns/{id}/runs` (run now). */
export const campaignRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  const runs = runViews(ctx);

  app.post(
    '/campaigns',
    {
      schema: {
        operationId: 'createCampaign',
        tags: ['campaigns'],
        summary: 'Create a campaign',
        body: createCampaignBody,
        response: { 201: campaign, ...errorResponses() },
      },
    },
    async (req, reply) => {
      const body = req.body;
      const now = ctx.now();
      const { tenantId, draft } = await checkNewCampaign(ctx, req.caller, body, now);
      // Validate, write, answer: the answer is built before the commit, so one that cannot be
      // given rolls the insert back.
      const answer = await ctx.db.transaction().execute(async (trx) => {
        // A campaign is created when it is saved, not when its request arrived: a first
        // occurrence due "now" is the moment of the insert, so the time the request spent
        // being validated or waiting for a connection is not counted as its run's lag.
        const savedAt = ctx.now();
        const nextRunAt = body.active ? firstOccurrence(draft.schedule, draft.timezone, savedAt) : null;
        const row = {
          id: randomUUID(),
          tenantId,
          accountId: body.accountId,
          name: body.name,
          timezone: draft.timezone,
          schedule: draft.schedule,
          windowStart: draft.deliveryWindow.start,
          windowEnd: draft.deliveryWindow.end,
          messages: draft.messages,
          ...storedTargets(draft.targets),
          audienceIds: draft.audienceIds,
          active: body.active,
          autoResume: body.autoResume,
          nextRunAt,
          catchUpPolicy: body.catchUp?.policy ?? 'latest',
          catchUpMaxLatenessSeconds: body.catchUp?.maxLatenessSeconds ?? null,
        };
        // a first occurrence due now is planned before the insert, which creates its run too
        const first = nextRunAt ? planFirstRun(ctx, { ...row, nextRunAt, lastScheduledAt: null, catchUpThrough: null }, savedAt) : null;
        // its audiences held until the commit: one deleted since the check above is a 400, and
        // a delete of one waits for this save, then sees the campaign (AudienceRepository.delete)
        const gone = await audienceProblems(trx, tenantId, draft, false);
        if (gone.length > 0) throw validationFailed(gone);
        const created = await new CampaignRepository(trx).create(row, savedAt, first?.writes ?? null);
        const run = created.firstRunCreated && first ? first.instant : null;
        // the answer shows the campaign as saved, before the run moved it to its next occurrence
        return { view: checkedCampaignView(created), row: created, run };
      });
      await startCreatedRun(ctx, answer.run, answer.row);
      return reply.code(201).send(answer.view);
    },
  );

  app.get(
    '/campaigns',
    {
      schema: {
        operationId: 'listCampaigns',
        tags: ['campaigns'],
        summary: 'List campaigns, newest first',
        querystring: listCampaignsQuery,
        response: { 200: campaignPage, ...errorResponses() },
      },
    },
    async (req) => {
      const { limit, cursor } = req.query;
      const before = cursor === undefined ? undefined : decodePosition(cursor);
      const rows = await ctx.campaigns.list(scopeOf(req.caller), { limit: limit + 1, before });
      const page = pageOf(rows, limit, (c) => encodePosition({ at: c.cursorAt, id: c.id }));
      return { items: page.rows.map(campaignView), nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/campaigns/:id',
    {
      schema: {
        operationId: 'getCampaign',
        tags: ['campaigns'],
        summary: 'One campaign, with nextRunAt and lastRunId',
        params: idParams,
        response: { 200: campaign, ...errorResponses(404) },
      },
    },
    async (req) => {
      const found = await ctx.campaigns.find(req.params.id, scopeOf(req.caller));
      if (!found) throw notFound('campaign');
      return campaignView(found);
    },
  );

  app.patch(
    '/campaigns/:id',
    {
      schema: {
        operationId: 'updateCampaign',
        tags: ['campaigns'],
        summary: 'Change any field; applies to runs created afterwards',
        params: idParams,
        body: patchCampaignBody,
        response: { 200: campaign, ...errorResponses(404) },
      },
    },
    async (req) => {
      const patch = req.body;
      const scope = scopeOf(req.caller);
      const updated = await ctx.db.transaction().execute(async (trx) => {
        const campaigns = new CampaignRepository(trx);
        // Locked while we validate the merged campaign, so two PATCHes cannot interleave.
        const current = await campaigns.findForUpdate(req.params.id, scope);
        if (!current) throw notFound('campaign');
        const draft: CampaignDraft = {
          timezone: patch.timezone ?? current.timezone,
          schedule: patch.schedule ? normaliseSchedule(patch.schedule) : current.schedule,
          deliveryWindow: patch.deliveryWindow ?? { start: current.windowStart, end: current.windowEnd },
          messages: patch.messages ?? current.messages,
          targets: patch.targets ?? givenTargets(current.targets, current.targetVars, current.targetThreads),
          audienceIds: patch.audienceIds ?? current.audienceIds,
        };
        const now = ctx.now();
        // texts naming a built-in ({{chat.title}}) are judged again on a new account's directory
        const builtinsMoved = patch.accountId !== undefined && partsUseBuiltins(draft.messages);
        const problems = [
          ...campaignProblems(draft, ctx.config.minIntervalSeconds, now),
          // Only when the texts or targets change: an edit of anything else never refuses a
          // campaign saved before templates were checked.
          ...(patch.messages !== undefined || patch.targets !== undefined || builtinsMoved
            ? await namedPersonalProblems(trx, current.tenantId, patch.accountId ?? current.accountId, draft.messages, draft.targets)
            : []),
          ...(await ownershipProblems(trx, current.tenantId, patch.accountId, patch.messages ? draft : null)),
          ...(patch.accountId !== undefined || patch.messages !== undefined
            ? await uploadLimitProblems(trx, current.tenantId, patch.accountId ?? current.accountId, draft.messages)
            : []),
          ...(patch.audienceIds !== undefined || patch.messages !== undefined || patch.targets !== undefined || builtinsMoved
            ? await audienceProblems(trx, current.tenantId, draft, true, patch.accountId ?? current.accountId)
            : []),
          ...(patch.accountId !== undefined || patch.targets !== undefined || patch.audienceIds !== undefined
            ? await topicProblems(trx, current.tenantId, patch.accountId ?? current.accountId, draft)
            : []),
        ];
        if (problems.length > 0) throw validationFailed(problems);
        const changes: CampaignChanges = {
          ...(patch.accountId !== undefined && { accountId: patch.accountId }),
          ...(patch.name !== undefined && { name: patch.name }),
          ...(patch.timezone !== undefined && { timezone: draft.timezone }),
          ...(patch.schedule !== undefined && { schedule: draft.schedule }),
          ...(patch.deliveryWindow !== undefined && { windowStart: draft.deliveryWindow.start, windowEnd: draft.deliveryWindow.end }),
          ...(patch.messages !== undefined && { messages: draft.messages }),
          ...(patch.targets !== undefined && storedTargets(draft.targets)),
          ...(patch.audienceIds !== undefined && { audienceIds: draft.audienceIds }),
          ...(patch.active !== undefined && { active: patch.active }),
          ...(patch.autoResume !== undefined && { autoResume: patch.autoResume }),
          ...(patch.catchUp?.policy !== undefined && { catchUpPolicy: patch.catchUp.policy }),
          ...(patch.catchUp?.maxLatenessSeconds !== undefined && { catchUpMaxLatenessSeconds: patch.catchUp.maxLatenessSeconds }),
        };
        const active = patch.active ?? current.active;
        // A stored next run no answer can show (saved before times were range-checked) is
        // worked out again by any accepted edit.
        if (timingChanged(current, draft, active) || (current.nextRunAt !== null && shownInstant(current.nextRunAt) === null)) {
          changes.nextRunAt = active ? rescheduledOccurrence(draft.schedule, draft.timezone, now, current.lastScheduledAt) : null;
        }
        // Re-activating is the operator's answer to an automatic pause: forget it.
        if (patch.active === true && !current.active) changes.clearAutoPause = true;
        // Any edit is the operator's answer to the scheduler's deactivation: its reason is stale.
        changes.clearLastError = true;
        const row = await campaigns.update(current.id, scope, changes, now);
        if (!row) throw notFound('campaign');
        const run = await createDueRun(ctx, trx, row, now);
        // Built before the commit (validate, write, answer), like the answer to a create.
        return { view: checkedCampaignView(row), row, run };
      });
      await startCreatedRun(ctx, updated.run, updated.row);
      return updated.view;
    },
  );

  app.delete(
    '/campaigns/:id',
    {
      schema: {
        operationId: 'deleteCampaign',
        tags: ['campaigns'],
        summary: 'Deactivate and hide the campaign and cancel its open runs',
        params: idParams,
        response: { 204: z.undefined().describe('deleted'), ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      const scope = scopeOf(req.caller);
      await ctx.db.transaction().execute(async (trx) => {
        const now = ctx.now();
        if (!(await new CampaignRepository(trx).softDelete(req.params.id, scope, now))) throw notFound('campaign');
        await new RunControlRepository(trx).cancelOpenOfCampaign(req.params.id, now);
      });
      return reply.code(204).send();
    },
  );

  app.post(
    '/campaigns/:id/runs',
    {
      schema: {
        operationId: 'runCampaignNow',
        tags: ['campaigns'],
        summary: 'Run now (trigger manual); 409 while a run of the campaign is queued or running',
        params: idParams,
        body: runNowBody.nullish(),
        response: { 201: run, ...errorResponses(404, 409) },
      },
    },
    async (req, reply) => {
      const created = await startManualRun(ctx, req.params.id, scopeOf(req.caller), { ignoreInterval: req.body?.ignoreInterval ?? false });
      // explained as GET /v1/runs/{id} would explain it now (waiting, eta)
      return reply.code(201).send(await runs.one(created));
    },
  );
};

// Whether next_run_at must be recomputed: the schedule, its zone, the window or `active`
// really changed (a PATCH repeating current values must not re-trigger an interval campaign).
function timingChanged(current: CampaignRow, draft: CampaignDraft, active: boolean): boolean {
  return (
    active !== current.active ||
    draft.timezone !== current.timezone ||
    draft.deliveryWindow.start !== current.windowStart ||
    draft.deliveryWindow.end !== current.windowEnd ||
    !sameSchedule(draft.schedule, current.schedule)
  );
}

function sameSchedule(a: Schedule, b: Schedule): boolean {
  return JSON.stringify(normaliseSchedule(a)) === JSON.stringify(normaliseSchedule(b));
}
