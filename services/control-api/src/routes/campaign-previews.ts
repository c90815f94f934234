import { previewRun, rescheduledOccurrence, upcomingOccurrences, type UpcomingOccurrence } from '@metronome/core';
import { AccountRepository, AudienceMemberRepository, campaignReach, type CampaignRow } from '@metronome/db';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { scopeOf } from '../caller.js';
import type { ApiContext } from '../context.js';
import { notFound } from '../errors.js';
import { previewMessage } from '../message-preview.js';
import { checkNewCampaign } from '../new-campaign.js';
import { chatIdOf, givenTargets, keyOfTarget, type CampaignTarget } from '../personal-rules.js';
import { createCampaignBody, shownInstant } from '../schemas/campaigns.js';
import { errorResponses, idParams, storableInstant } from '../schemas/common.js';
import {
  campaignPreview,
  campaignReach as reachSchema,
  occurrenceList,
  occurrencesQuery,
  occurrenceView,
  PREVIEW_OCCURRENCES,
  previewQuery,
} from '../schemas/previews.js';

/** A campaign's next runs as the scheduler will create them, and for an unsaved one what a run takes at its pace. Writes nothing. */
export const campaignPreviewRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  app.get(
    '/campaigns/:id/occurrences',
    {
      schema: {
        operationId: 'listCampaignOccurrences',
        tags: ['campaigns'],
        summary: 'The next runs the scheduler will create for the campaign (empty when it is deactivated, unless ifActive)',
        params: idParams,
        querystring: occurrencesQuery,
        response: { 200: occurrenceList, ...errorResponses(404) },
      },
    },
    async (req) => {
      const c = await ctx.campaigns.find(req.params.id, scopeOf(req.caller));
      if (!c) throw notFound('campaign');
      // A stored next run no answer can show (saved before range checks) is no occurrence; lastError says so, a PATCH repairs it.
      const now = ctx.now();
      const nextRunAt = c.active
        ? shownInstant(c.nextRunAt) !== null
          ? c.nextRunAt
          : null
        : // deactivated, with ifActive: where an activation would put it (routes/campaigns.ts, PATCH)
          req.query.ifActive
          ? rescheduledOccurrence(c.schedule, c.timezone, now, c.lastScheduledAt)
          : null;
      const upcoming = upcomingOccurrences(
        {
          campaignId: c.id,
          schedule: c.schedule,
          timezone: c.timezone,
          window: { start: c.windowStart, end: c.windowEnd },
          nextRunAt,
          lastScheduledAt: c.lastScheduledAt,
          catchUp: { policy: c.catchUpPolicy, maxLatenessSeconds: c.catchUpMaxLatenessSeconds },
          acceptedThrough: c.catchUpThrough,
        },
        now,
        req.query.limit,
      );
      return { items: showable(upcoming).map(occurrenceView) };
    },
  );

  app.post(
    '/campaigns/preview',
    {
      schema: {
        operationId: 'previewCampaign',
        tags: ['campaigns'],
        summary: 'Validate a campaign create body exactly as create does and preview it, its message as one chat receives it; nothing is saved',
        querystring: previewQuery,
        body: createCampaignBody,
        response: { 200: campaignPreview, ...errorResponses() },
      },
    },
    async (req) => {
      const body = req.body;
      const now = ctx.now();
      const { tenantId, draft, nextRunAt } = await checkNewCampaign(ctx, req.caller, body, now);
      const account = await new AccountRepository(ctx.db).find(body.accountId, tenantId);
      const upcoming = showable(
        upcomingOccurrences(
          {
            campaignId: '',
            schedule: draft.schedule,
            timezone: draft.timezone,
            window: draft.deliveryWindow,
            nextRunAt,
            lastScheduledAt: null,
            catchUp: body.catchUp,
          },
          now,
          PREVIEW_OCCURRENCES,
        ),
      );
      const first = upcoming[0];
      const run = previewRun(
        {
          // the chats a run created now would send to, audience members included
          targets: await new AudienceMemberRepository(ctx.db).runChatCount(draft.audienceIds, draft.targets.map(keyOfTarget)),
          partsPerChat: draft.messages.length,
          perMinute: account?.maxSendPerMinute ?? ctx.config.defaultMaxSendPerMinute,
          timezone: draft.timezone,
          window: draft.deliveryWindow,
          startsAt: first?.startsAt ?? null,
          windowEndAt: first?.windowEndAt ?? null,
        },
        now,
      );
      const reach = await campaignReach(ctx.db, reachOf(tenantId, body.accountId, draft.targets, draft.audienceIds));
      const { messages, targets, audienceIds } = draft;
      const message = await previewMessage(ctx, { tenantId, accountId: body.accountId, messages, targets, audienceIds }, req.query);
      return { occurrences: upcoming.map(occurrenceView), run, reach, message };
    },
  );

  app.get(
    '/campaigns/:id/reach',
    {
      schema: {
        operationId: 'getCampaignReach',
        tags: ['campaigns'],
        summary: 'The chats a run of the campaign created now would reach: targets + audience members − suppressed − cannot post',
        params: idParams,
        response: { 200: reachSchema, ...errorResponses(404) },
      },
    },
    async (req) => {
      const c = await ctx.campaigns.find(req.params.id, scopeOf(req.caller));
      if (!c) throw notFound('campaign');
      return campaignReach(ctx.db, reachOf(c.tenantId, c.accountId, givenTargetsOf(c), c.audienceIds));
    },
  );
};

function reachOf(tenantId: string, accountId: string, targets: CampaignTarget[], audienceIds: string[]) {
  return { tenantId, accountId, targetChats: targets.map(chatIdOf), targetKeys: targets.map(keyOfTarget), audienceIds };
}

const givenTargetsOf = (c: CampaignRow): CampaignTarget[] => givenTargets(c.targets, c.targetVars, c.targetThreads);

function showable(items: UpcomingOccurrence[]): UpcomingOccurrence[] {
  const bad = items.findIndex((o) => [o.scheduledAt, o.startsAt, o.windowEndAt].some((d) => d !== null && !storableInstant(d.getTime())));
  return bad === -1 ? items : items.slice(0, bad);
}
