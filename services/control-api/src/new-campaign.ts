import { ALWAYS_OPEN, firstOccurrence, TOPIC_PLATFORMS } from '@metronome/core';
import { AccountRepository, AudienceMemberRepository, AudienceRepository, MediaRepository, type DB, type MessagePart } from '@metronome/db';
import { UPLOAD_LIMITS, uploadTooLarge } from '@metronome/transports';
import type { Kysely } from 'kysely';
import { ownerFor, type Caller } from './caller.js';
import { campaignProblems, mediaRefs, normaliseSchedule, type CampaignDraft } from './campaign-rules.js';
import type { ApiContext } from './context.js';
import { invalidField, validationFailed, type FieldProblem } from './errors.js';
import { keyOfTarget, namedPersonalProblems, threadIdOf, usedVariables, type CampaignTarget } from './personal-rules.js';
import type { CreateCampaignBody } from './schemas/campaigns.js';

/** A create body that passed every rule: whose it is, the campaign as stored, its first occurrence. */
export interface CheckedCampaign {
  tenantId: string;
  draft: CampaignDraft;
  nextRunAt: Date | null;
}

/**
 * Every rule `POST /v1/campaigns` applies beyond the body's shape, for create and for its
 * preview alike, so a preview accepts exactly what a create would: the owner, the cross-field
 * rules of campaign-rules.ts, and the account and media being the owner's. Throws the one 400
 * naming every bad field; writes nothing.
 */
export async function checkNewCampaign(ctx: ApiContext, caller: Caller, body: CreateCampaignBody, now: Date): Promise<CheckedCampaign> {
  const tenantId = ownerFor(caller, body.tenantId);
  if (caller.admin && !(await ctx.tenants.exists(tenantId))) throw invalidField('tenantId', 'no such tenant');
  const draft: CampaignDraft = {
    timezone: body.timezone,
    schedule: normaliseSchedule(body.schedule),
    deliveryWindow: body.deliveryWindow ?? ALWAYS_OPEN,
    messages: body.messages,
    targets: body.targets,
    audienceIds: body.audienceIds,
  };
  const problems = [
    ...campaignProblems(draft, ctx.config.minIntervalSeconds, now),
    ...(await namedPersonalProblems(ctx.db, tenantId, body.accountId, draft.messages, draft.targets)),
    ...(await ownershipProblems(ctx.db, tenantId, body.accountId, draft)),
    ...(await uploadLimitProblems(ctx.db, tenantId, body.accountId, draft.messages)),
    ...(await audienceProblems(ctx.db, tenantId, draft, true, body.accountId)),
    ...(await topicProblems(ctx.db, tenantId, body.accountId, draft)),
  ];
  if (problems.length > 0) throw validationFailed(problems);
  return { tenantId, draft, nextRunAt: body.active ? firstOccurrence(draft.schedule, draft.timezone, now) : null };
}

/**
 * The account and media a campaign names must be its tenant's; another tenant's are reported
 * exactly like missing ones. `draft` null: the messages did not change, nothing to check.
 */
export async function ownershipProblems(db: Kysely<DB>, tenantId: string, accountId: string | undefined, draft: CampaignDraft | null): Promise<FieldProblem[]> {
  const problems: FieldProblem[] = [];
  if (accountId !== undefined && !(await new AccountRepository(db).find(accountId, tenantId))) {
    problems.push({ field: 'accountId', message: 'no such account' });
  }
  const refs = draft ? mediaRefs(draft.messages) : [];
  if (refs.length > 0) {
    const owned = await new MediaRepository(db).ownedIds(tenantId, [...new Set(refs.map((r) => r.mediaId))]);
    for (const ref of refs) if (!owned.has(ref.mediaId)) problems.push({ field: ref.field, message: 'no such media' });
  }
  return problems;
}

/** Why a target of an account on `platform` cannot name a forum topic; null when it can. */
export function topicRefusal(platform: string): string | null {
  return TOPIC_PLATFORMS.includes(platform)
    ? null
    : `forum topics are Telegram's (telegram, telegram_user accounts); this account's platform (${platform}) has none`;
}

/**
 * A target naming a forum topic (threadId) needs a Telegram account: otherwise a 400 naming
 * each such target's `targets.N.threadId`, and each audience with a member in a topic
 * (`audienceIds.N`). Reads the account only when the account's platform may matter.
 */
export async function topicProblems(
  db: Kysely<DB>,
  tenantId: string,
  accountId: string,
  draft: { targets: CampaignTarget[]; audienceIds: string[] },
): Promise<FieldProblem[]> {
  const targets = draft.targets.some((t) => threadIdOf(t) !== undefined);
  if (!targets && draft.audienceIds.length === 0) return [];
  const account = await new AccountRepository(db).find(accountId, tenantId);
  const why = account ? topicRefusal(account.platform) : null;
  if (why === null) return [];
  const problems = draft.targets.flatMap((t, i) => (threadIdOf(t) === undefined ? [] : [{ field: `targets.${i}.threadId`, message: why }]));
  const withTopics = await new AudienceMemberRepository(db).withTopics(tenantId, draft.audienceIds);
  draft.audienceIds.forEach((a, i) => {
    if (withTopics.has(a)) problems.push({ field: `audienceIds.${i}`, message: `this audience has members in forum topics: ${why}` });
  });
  return problems;
}

/**
 * Each media a campaign names must fit its account's platform's upload limit (UPLOAD_LIMITS: a
 * Telegram bot's 50 MB): refused here, naming the part, rather than failing every chat of every run.
 */
export async function uploadLimitProblems(db: Kysely<DB>, tenantId: string, accountId: string, messages: MessagePart[]): Promise<FieldProblem[]> {
  const refs = mediaRefs(messages);
  if (refs.length === 0) return [];
  const account = await new AccountRepository(db).find(accountId, tenantId);
  if (!account || !Object.hasOwn(UPLOAD_LIMITS, account.platform)) return [];
  const sizes = await new MediaRepository(db).sizes(tenantId, [...new Set(refs.map((r) => r.mediaId))]);
  return refs.flatMap((ref) => {
    const size = sizes.get(ref.mediaId);
    const why = size === undefined ? null : uploadTooLarge(account.platform, size);
    return why ? [{ field: ref.field, message: why }] : [];
  });
}

/**
 * The audiences a campaign names must be its tenant's (another tenant's is reported like a
 * missing one, `audienceIds.N`). With `checkVars` (its texts, targets or audiences changed), a
 * variable its texts use must have a value for every member too, as for every target (the first
 * member lacking one is named); a chat that is also an inline target takes the target's vars.
 * Members added later without it get the tag as written (CONTRACT, Audiences). A built-in
 * (`{{chat.title}}`) is judged on the directory of `accountId`, the campaign's account.
 */
export async function audienceProblems(
  db: Kysely<DB>,
  tenantId: string,
  draft: { audienceIds: string[]; messages: MessagePart[]; targets: CampaignTarget[] },
  checkVars: boolean,
  accountId?: string,
): Promise<FieldProblem[]> {
  if (draft.audienceIds.length === 0) return [];
  const owned = await new AudienceRepository(db).ownedIds(tenantId, draft.audienceIds);
  const problems = draft.audienceIds.flatMap((a, i) => (owned.has(a) ? [] : [{ field: `audienceIds.${i}`, message: 'no such audience' }]));
  if (problems.length > 0 || !checkVars) return problems;
  const used = usedVariables(draft.messages);
  const missing = await new AudienceMemberRepository(db).firstMissingVariable(
    draft.audienceIds,
    [...used.keys()],
    draft.targets.map(keyOfTarget),
    accountId === undefined ? undefined : { tenantId, accountId },
  );
  if (missing) {
    problems.push({
      field: `audienceIds.${draft.audienceIds.indexOf(missing.audienceId)}`,
      message: `${used.get(missing.name)} uses {{${missing.name}}}, and member ${JSON.stringify(missing.chatId)} of this audience has no value for it`,
    });
  }
  return problems;
}
