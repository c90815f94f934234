import { CATCH_UP_ALL_LIMIT, MAX_LATENESS_SECONDS, MAX_TARGET_VARS, MAX_VAR_VALUE_LENGTH, scheduleInWords, VAR_NAME } from '@metronome/core';
import type { CampaignRow } from '@metronome/db';
import { z } from 'zod';
import { givenTargets } from '../personal-rules.js';
import { chatId, id, iso, pageOf, pageQuery, storableInstant, text, threadId, time, timeInput } from './common.js';

export const MAX_PARTS = 10;
export const MAX_TARGETS = 10_000;
export const MAX_AUDIENCES = 20;

export const schedule = z
  .discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('interval'),
      everySeconds: z.number().int().min(1).max(31_536_000).describe('at least MIN_INTERVAL_SECONDS'),
      startAt: timeInput.optional().describe('first occurrence; later ones follow on its grid'),
    }),
    z.strictObject({ type: z.literal('cron'), expression: text(1, 256).describe("five-field cron, in the campaign's timezone") }),
    z.strictObject({ type: z.literal('once'), at: timeInput }),
  ])
  .meta({ id: 'Schedule' });

const timeOfDay = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/, 'expected HH:MM');

export const deliveryWindow = z
  .strictObject({ start: timeOfDay, end: timeOfDay })
  .describe("HH:MM in the campaign's timezone; end < start crosses midnight; start == end is rejected")
  .meta({ id: 'DeliveryWindow' });

export const messagePart = z
  .discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('text'),
      text: text(1, 4096).describe("may use the target's variables ({{name}}) and variations ({Hi|Hello}), see Target"),
    }),
    z.strictObject({ type: z.literal('media'), mediaId: id, caption: text(0, 1024).optional().describe('may use variables and variations, as a text') }),
  ])
  .meta({ id: 'MessagePart' });

/** A target's variables for personal messages: name → value. */
export const targetVars = z
  .record(
    z.string().regex(VAR_NAME, 'a variable name is letters, digits and _, not starting with a digit, at most 64 characters'),
    text(0, MAX_VAR_VALUE_LENGTH),
  )
  .refine((v) => Object.keys(v).length <= MAX_TARGET_VARS, `at most ${MAX_TARGET_VARS} variables`)
  .describe(
    `the values of the {{name}} tags the campaign's texts use for this chat: at most ${MAX_TARGET_VARS}, each at most ${MAX_VAR_VALUE_LENGTH} characters`,
  );

// A union reports only "invalid input" at the target; the shape the client chose (a string, or
// an object) says which option's first problem to name, with its path inside the target.
function targetProblem(issue: { code?: string; input?: unknown; errors?: unknown }): string | undefined {
  if (issue.code !== 'invalid_union' || !Array.isArray(issue.errors)) return undefined;
  const option = typeof issue.input === 'string' ? 0 : issue.input !== null && typeof issue.input === 'object' ? 1 : -1;
  if (option === -1) return 'expected a chat id or {chatId, threadId?, vars?}';
  const first = (issue.errors[option] as { path: PropertyKey[]; message: string }[] | undefined)?.[0];
  if (!first) return undefined;
  return first.path.length > 0 ? `${first.path.map(String).join('.')}: ${first.message}` : first.message;
}

/** A target: a chat id, or a chat id with its forum topic and/or its variables (personal messages). */
export const target = z
  .union([chatId, z.strictObject({ chatId, threadId: threadId.optional(), vars: targetVars.optional() })], { error: targetProblem })
  .describe(
    "a chat id, or {chatId, threadId?, vars?}: threadId posts into a forum topic of the chat (telegram, telegram_user; the same chat in two topics is two targets); vars for personal messages: every {{name}} a text or caption uses must have a value in every target's vars; {a|b|c} sends one option, the same for a chat on every re-send of a run",
  )
  .meta({ id: 'Target' });

const catchUpPolicy = z
  .enum(['skip', 'latest', 'all'])
  .describe(
    `what to do with occurrences the scheduler reaches late (it was down, or the previous run was still open): skip runs none of them; latest runs the latest one; all runs each, in order, one after another (at most ${CATCH_UP_ALL_LIMIT})`,
  );
const maxLatenessSeconds = z
  .number()
  .int()
  .min(1)
  .max(MAX_LATENESS_SECONDS)
  .nullable()
  .describe('an occurrence reached later than this is skipped; null: one interval (cron: the gap to the next occurrence), at most 86400');

export const catchUpInput = z
  .strictObject({ policy: catchUpPolicy.default('latest'), maxLatenessSeconds: maxLatenessSeconds.default(null) })
  .meta({ id: 'CatchUp' });

const fields = {
  accountId: id,
  name: text(1, 200),
  timezone: text(1, 64).describe('IANA zone name, e.g. Asia/Kuala_Lumpur'),
  schedule,
  deliveryWindow,
  messages: z.array(messagePart).min(1).max(MAX_PARTS),
  targets: z
    .array(target)
    .max(MAX_TARGETS)
    .describe(
      'distinct chat ids, each 1–256 printable characters (no control characters; any script); each may carry variables ({chatId, vars}). At least one, unless audienceIds names an audience',
    ),
  audienceIds: z
    .array(id)
    .max(MAX_AUDIENCES)
    .describe(
      "the tenant's audiences whose members each run also sends to, as they are when the run is created; a chat in several (or also a target) is sent to once, with the target's vars, else the first audience's",
    ),
  active: z.boolean(),
  autoResume: z.boolean(),
};

export const createCampaignBody = z.strictObject({
  ...fields,
  targets: fields.targets.default([]).describe(`required unless audienceIds names an audience; ${fields.targets.description}`),
  audienceIds: fields.audienceIds.default([]),
  deliveryWindow: deliveryWindow.optional().describe('defaults to 00:00–24:00 (always open)'),
  active: fields.active.default(true),
  autoResume: fields.autoResume.default(false),
  catchUp: catchUpInput.optional().describe('defaults to {"policy":"latest","maxLatenessSeconds":null}'),
  tenantId: id.optional().describe('admin only: the tenant that owns the campaign'),
});
export type CreateCampaignBody = z.output<typeof createCampaignBody>;

export const patchCampaignBody = z
  .strictObject({
    ...fields,
    catchUp: z
      .strictObject({ policy: catchUpPolicy, maxLatenessSeconds })
      .partial()
      .describe('only the fields given change; maxLatenessSeconds null goes back to the default'),
  })
  .partial();
export type PatchCampaignBody = z.output<typeof patchCampaignBody>;

export const listCampaignsQuery = z.object({ ...pageQuery });

/**
 * A schedule instant as shown: stored as UTC ISO-8601, so shown as stored, also when a campaign
 * saved before times were range-checked holds one outside years 0001–9999 (`+010000-01-01…`):
 * its answer must not fail, and its owner should see what to repair.
 */
const storedTime = z
  .string()
  .describe(
    'ISO-8601 in UTC; a campaign saved before times were range-checked shows the value it was saved with, which may lie outside years 0001–9999 (lastError says so)',
  );

export const campaign = z
  .object({
    id,
    tenantId: id,
    ...fields,
    // a stored schedule is shown as stored (its instants normalised to UTC)
    schedule: z.discriminatedUnion('type', [
      z.object({ type: z.literal('interval'), everySeconds: z.number().int(), startAt: storedTime.optional() }),
      z.object({ type: z.literal('cron'), expression: z.string() }),
      z.object({ type: z.literal('once'), at: storedTime }),
    ]),
    deliveryWindow: z.object({ start: z.string(), end: z.string() }),
    scheduleText: z
      .string()
      .describe(
        'the schedule, delivery window and timezone in words, e.g. "every 5 minutes, 06:00–18:00 Asia/Kuala_Lumpur"; a cron keeps its expression beside them',
      ),
    messages: z.array(
      z.discriminatedUnion('type', [
        z.object({ type: z.literal('text'), text: z.string() }),
        z.object({ type: z.literal('media'), mediaId: id, caption: z.string().optional() }),
      ]),
    ),
    targets: z
      .array(z.union([z.string(), z.object({ chatId: z.string(), threadId: z.number().int().optional(), vars: z.record(z.string(), z.string()).optional() })]))
      .describe(
        'as given: chat ids stay strings, targets given with a topic or variables stay {chatId, threadId?, vars?} (an object with neither shows as its chat id)',
      ),
    nextRunAt: time
      .nullable()
      .describe('the next occurrence not yet turned into a run; also null when the stored one lies outside years 0001–9999 (lastError says so)'),
    lastRunId: id.nullable(),
    pausedReason: z.string().nullable().describe('why the scheduler paused the campaign, if it did'),
    lastError: z
      .string()
      .nullable()
      .describe(
        'why the scheduler deactivated the campaign, if it did; cleared by the next PATCH. Else, for a campaign saved before times were range-checked, which stored times lie outside years 0001–9999',
      ),
    catchUp: z.object({ policy: catchUpPolicy, maxLatenessSeconds }),
    skippedCount: z.number().int().describe('occurrences the scheduler passed over without a run (by the catch-up policy), since the campaign was created'),
    lastSkippedAt: time.nullable().describe('the latest occurrence skipped, null when none was'),
    createdAt: time,
    updatedAt: time,
  })
  .meta({ id: 'Campaign' });

export const campaignPage = pageOf(campaign);

/** A stored instant as an answer shows it: null when it is not a time in years 0001–9999 (`infinity` comes back as a number). */
export function shownInstant(d: Date | null): string | null {
  return d instanceof Date && storableInstant(d.getTime()) ? d.toISOString() : null;
}

/** The fields of a stored campaign that hold an instant outside years 0001–9999, for lastError. */
function outOfRange(c: CampaignRow): string[] {
  const bad: string[] = [];
  if (c.nextRunAt !== null && shownInstant(c.nextRunAt) === null) bad.push('nextRunAt');
  const s = c.schedule;
  if (s.type === 'once' && !storableInstant(Date.parse(s.at))) bad.push('schedule.at');
  if (s.type === 'interval' && s.startAt !== undefined && !storableInstant(Date.parse(s.startAt))) bad.push('schedule.startAt');
  return bad;
}

export function campaignView(c: CampaignRow): z.output<typeof campaign> {
  const bad = outOfRange(c);
  const stale =
    bad.length === 0
      ? null
      : `${bad.join(', ')} stored outside years 0001–9999 (UTC), from before such times were refused: nextRunAt is shown as null, the schedule as stored; PATCH the schedule to repair it`;
  return {
    id: c.id,
    tenantId: c.tenantId,
    accountId: c.accountId,
    name: c.name,
    timezone: c.timezone,
    schedule: c.schedule,
    deliveryWindow: { start: c.windowStart, end: c.windowEnd },
    scheduleText: scheduleInWords(c.schedule, { start: c.windowStart, end: c.windowEnd }, c.timezone),
    messages: c.messages,
    targets: givenTargets(c.targets, c.targetVars, c.targetThreads),
    audienceIds: c.audienceIds,
    active: c.active,
    autoResume: c.autoResume,
    nextRunAt: shownInstant(c.nextRunAt),
    lastRunId: c.lastRunId,
    pausedReason: c.pausedReason,
    lastError: c.lastError ?? stale,
    catchUp: { policy: c.catchUpPolicy, maxLatenessSeconds: c.catchUpMaxLatenessSeconds },
    skippedCount: c.skippedCount,
    lastSkippedAt: shownInstant(c.lastSkippedAt),
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
  };
}

/**
 * The answer for a campaign just written, checked against the response schema. Routes build
 * it before their transaction commits, so a campaign the API could not show is never saved.
 */
export function checkedCampaignView(c: CampaignRow): z.output<typeof campaign> {
  return campaign.parse(campaignView(c));
}
