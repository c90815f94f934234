import { previewRun, upcomingOccurrences, type UpcomingOccurrence } from '@metronome/core';
import { AccountRepository, AudienceMemberRepository } from '@metronome/db';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { scopeOf } from '../caller.js';
import type { ApiContext } from '../context.js';
import { notFound } from '../errors.js';
import { checkNewCampaign } from '../new-campaign.js';
import { keyOfTarget } from '../personal-rules.js';
import { createCampaignBody, shownInstant } from '../schemas/campaigns.js';
import { errorResponses, idParams, storableInstant } from '../schemas/common.js';
import { campaignPreview, occurrenceList, occurrencesQuery, occurrenceView, PREVIEW_OCCURRENCES } from '../schemas/previews.js';

/**
 * What a campaign will do: its next runs as the scheduler will create them (libs/core
 * upcomingOccurrences, planOccurrence step by step), and for a campaign not yet saved, what one
 * run takes at its account's pace. Nothing here writes.
 */
export const campaignPreviewRoutes: FastifyPluginAsyncZod<{ ctx: ApiContext }> = async (app, { ctx }) => {
  app.get(
    '/campaigns/:id/occurrences',
    {
      schema: {
        operationId: 'listCampaignOccurrences',
        tags: ['campaigns'],
        summary: 'The next runs the scheduler will create for the campaign (empty when it is deactivated)',
        params: idParams,
        querystring: occurrencesQuery,
        response: { 200: occurrenceList, ...errorResponses(404) },
      },
    },
    async (req) => {
      const c = await ctx.campaigns.find(req.params.id, scopeOf(req.caller));
      if (!c) throw notFound('campaign');
      // A stored next run no answer can show (saved before times were range-checked) is no
      // occurrence to work from; lastError says so and a PATCH repairs it.
      const nextRunAt = c.active && shownInstant(c.nextRunAt) !== null ? c.nextRunAt : null;
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
        ctx.now(),
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
        summary: 'Validate a campaign create body exactly as create does and preview it; nothing is saved',
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
      return { occurrences: upcoming.map(occurrenceView), run };
    },
  );
};

/** The occurrences up to the first an answer cannot show (past year 9999, UTC). */
function showable(items: UpcomingOccurrence[]): UpcomingOccurrence[] {
  const bad = items.findIndex((o) => [o.scheduledAt, o.startsAt, o.windowEndAt].some((d) => d !== null && !storableInstant(d.getTime())));
  return bad === -1 ? items : items.slice(0, bad);
}
