import { MAX_THREAD_ID, type UpcomingOccurrence } from '@metronome/core';
import { z } from 'zod';
import { chatId, time } from './common.js';

export const MAX_OCCURRENCES = 100;
/** How many occurrences the preview of a new campaign shows. */
export const PREVIEW_OCCURRENCES = 10;

export const occurrencesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_OCCURRENCES).default(10).describe('how many occurrences, 1–100'),
  ifActive: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .describe('true: for a deactivated campaign, the runs it would get if it were activated now (as PATCH {"active": true} would plan them)'),
});

const count = (what: string) => z.number().int().min(0).describe(what);

export const campaignReach = z
  .object({
    reach: count('the chats a run created now would send to: targets + audienceMembers − suppressed − cannotPost'),
    targets: count("the campaign's own targets (picked or typed chats)"),
    audienceMembers: count("members of its audiences that are not targets, each chat (and forum topic) once, as a run's snapshot takes them"),
    suppressed: count("of those, chats on the account's suppression list or erased from the tenant: a run skips them"),
    cannotPost: count("of those not suppressed, chats the account's chat directory says it cannot post in"),
  })
  .meta({ id: 'CampaignReach' });

export const occurrence = z
  .object({
    scheduledAt: time.describe("the schedule's occurrence"),
    startsAt: time.describe("when its run may start: the occurrence inside the delivery window, else the window's next opening"),
    windowEndAt: time.nullable().describe('when that opening closes; null for a window that never closes'),
  })
  .meta({ id: 'Occurrence' });

export const occurrenceList = z
  .object({ items: z.array(occurrence).describe('the next runs the scheduler will create, soonest first; empty for a deactivated campaign') })
  .meta({ id: 'OccurrenceList' });

export const previewQuery = z.object({
  chatId: chatId
    .optional()
    .describe(
      "the chat `message` is rendered for: one of the body's targets, else a member of one of its audiences; absent: the first target, else the first audience member",
    ),
  threadId: z.coerce.number().int().min(1).max(MAX_THREAD_ID).optional().describe("with chatId: the target's forum topic"),
});

const previewSpan = z
  .object({
    text: z.string(),
    variable: z.string().nullable().describe('the variable of the {{…}} tag this stretch renders; null: text as written'),
    from: z
      .enum(['own', 'directory', 'fallback', 'missing'])
      .nullable()
      .describe(
        "where the variable's value came from: own (the chat's own variables), directory (a built-in from the account's chat directory), fallback (the tag's, after the |), missing (none: sent as written); null for text",
      ),
  })
  .meta({ id: 'PreviewSpan' });

export const previewMessage = z
  .object({
    chatId: z.string(),
    threadId: z.number().int().nullable().describe('its forum topic; null: none'),
    title: z.string().nullable().describe("its title in the account's chat directory, else its own `name` variable; null: neither"),
    from: z.enum(['target', 'audience']).describe('target: one of the targets; audience: a member of one of the audiences'),
    parts: z
      .array(
        z.object({
          type: z.enum(['text', 'media']),
          text: z.string().nullable().describe("the text, or a media part's caption, as this chat receives it; null: a media part without a caption"),
          spans: z.array(previewSpan).describe('the same text in stretches, each variable apart with where its value came from; joined, they are `text`'),
        }),
      )
      .describe('each message part, in order'),
  })
  .meta({ id: 'PreviewMessage' });
export type PreviewMessage = z.output<typeof previewMessage>;

export const campaignPreview = z
  .object({
    occurrences: z.array(occurrence).describe('the next 10 runs the campaign would get, as the scheduler would create them'),
    run: z
      .object({
        targets: z.number().int(),
        pacedPerMinute: z.number().describe("the sends per minute the sender reserves slots at for the account's maxSendPerMinute (2 % slower)"),
        durationSeconds: z.number().int().describe('from the first send to the last, at that pace, nothing else holding it'),
        fitsWindow: z.boolean().describe('whether the first run finishes before its window closes; false without an occurrence'),
        detail: z.string().describe("one plain sentence, times in the campaign's timezone"),
      })
      .describe('what one run of it takes at the account’s pace'),
    reach: campaignReach.describe('the chats a run created now would reach, and why the others not'),
    message: previewMessage
      .nullable()
      .describe(
        'the message as one chat receives it (?chatId, else the first target, else the first audience member), rendered as the sender renders it; null: no chat',
      ),
  })
  .meta({ id: 'CampaignPreview' });

export function occurrenceView(o: UpcomingOccurrence): z.output<typeof occurrence> {
  return { scheduledAt: o.scheduledAt.toISOString(), startsAt: o.startsAt.toISOString(), windowEndAt: o.windowEndAt ? o.windowEndAt.toISOString() : null };
}
