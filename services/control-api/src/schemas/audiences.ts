import type { AudienceMember, AudienceRow } from '@metronome/db';
import { z } from 'zod';
import { targetVars } from './campaigns.js';
import { chatId, id, iso, pageOf, pageQuery, text, threadId, time } from './common.js';

/** At most this many members in one upload (JSON or CSV rows). */
export const MAX_MEMBERS_PER_UPLOAD = 100_000;
/** The body limit of an upload: 100,000 members of a long chat id and a few variables each. */
export const MEMBERS_BODY_LIMIT = 64 * 1024 * 1024;

const name = text(1, 200).describe("unique among the tenant's audiences");

/** A member as given: a chat id (as a campaign target's) and its variables (as a target's vars). */
export const memberInput = z
  .strictObject({
    chatId,
    threadId: threadId.optional().describe("a forum topic of the chat (Telegram's message_thread_id): the same chat in two topics is two members"),
    vars: targetVars.optional().describe("the values of the campaign texts' {{name}} tags for this chat; none when omitted"),
  })
  .meta({ id: 'NewAudienceMember' });

export const createAudienceBody = z.strictObject({
  name,
  members: z
    .array(memberInput)
    .max(MAX_MEMBERS_PER_UPLOAD)
    .optional()
    .describe(`at most ${MAX_MEMBERS_PER_UPLOAD}; a repeated chat id (in the same topic) takes the later entry's vars`),
  tenantId: id.optional().describe('admin only: the tenant that owns the audience'),
});

export const patchAudienceBody = z.strictObject({ name });

export const listAudiencesQuery = z.object({ ...pageQuery });

export const listMembersQuery = z.object({
  query: z
    .string()
    .min(1)
    .max(256)
    .refine((s) => !/[\u0000-\u001f\u007f-\u009f]|\p{Cs}/u.test(s), 'must be printable text')
    .optional()
    .describe("members whose chat id or any variable's value contains it, any case, accents ignored"),
  ...pageQuery,
});

export const addMembersBody = z
  .strictObject({ members: z.array(memberInput).min(1).max(MAX_MEMBERS_PER_UPLOAD) })
  .describe(
    `or a CSV body (Content-Type: text/csv): a header row with a chatId column, an optional threadId column (a forum topic; empty: none) and one column per variable`,
  );

export const addMembersQuery = z.object({
  dryRun: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .describe('true: check the upload and answer what it would do, with the first 10 members, saving nothing'),
});

export const removeMembersBody = z.strictObject({
  chatIds: z.array(chatId).min(1).max(MAX_MEMBERS_PER_UPLOAD).describe('each chat is removed in every topic it is a member in'),
});

export const audience = z
  .object({ id, tenantId: id, name: z.string(), memberCount: z.number().int(), createdAt: time, updatedAt: time })
  .meta({ id: 'Audience' });

export const audiencePage = pageOf(audience);

export const member = z
  .object({
    chatId: z.string(),
    threadId: z.number().int().optional().describe('its forum topic; absent: none'),
    vars: z.record(z.string(), z.string()).nullable().describe('null: none'),
  })
  .meta({ id: 'AudienceMember' });

export const memberPage = pageOf(member);

export const membersAdded = z
  .object({
    added: z.number().int().describe('chats that were not members'),
    updated: z.number().int().describe('members whose variables were replaced'),
    preview: z.array(member).optional().describe('dryRun only: the first 10 members of the upload, as they would be saved'),
  })
  .meta({ id: 'MembersAdded' });

export const membersRemoved = z.object({ removed: z.number().int() }).meta({ id: 'MembersRemoved' });

export function audienceView(a: AudienceRow): z.output<typeof audience> {
  return { id: a.id, tenantId: a.tenantId, name: a.name, memberCount: a.memberCount, createdAt: iso(a.createdAt), updatedAt: iso(a.updatedAt) };
}

export const memberView = (m: AudienceMember): z.output<typeof member> => ({ chatId: m.chatId, ...(m.threadId && { threadId: m.threadId }), vars: m.vars });
