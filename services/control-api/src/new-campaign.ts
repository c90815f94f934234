import { ALWAYS_OPEN, firstOccurrence } from '@metronome/core';
import { AccountRepository, MediaRepository, type DB } from '@metronome/db';
import type { Kysely } from 'kysely';
import { ownerFor, type Caller } from './caller.js';
import { campaignProblems, mediaRefs, normaliseSchedule, type CampaignDraft } from './campaign-rules.js';
import type { ApiContext } from './context.js';
import { invalidField, validationFailed, type FieldProblem } from './errors.js';
import { personalMessageProblems } from './personal-rules.js';
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
  };
  const problems = [
    ...campaignProblems(draft, ctx.config.minIntervalSeconds, now),
    ...personalMessageProblems(draft.messages, draft.targets),
    ...(await ownershipProblems(ctx.db, tenantId, body.accountId, draft)),
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
