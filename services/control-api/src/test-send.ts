import { randomUUID } from 'node:crypto';
import { chatVariables, targetKey } from '@metronome/core';
import {
  AccountRepository,
  AudienceMemberRepository,
  CampaignRepository,
  ChatDirectoryRepository,
  insertTestRun,
  partsUseBuiltins,
  type RunRow,
} from '@metronome/db';
import { runJobId } from '@metronome/queue';
import type { ApiContext } from './context.js';
import { invalidField, notFound } from './errors.js';
import { topicRefusal } from './new-campaign.js';
import { enqueue } from './run-actions.js';

/**
 * Runs `POST /v1/campaigns/{id}/test-sends`: the campaign's message, rendered with the
 * variables of its chat `asChatId` (none when not given) over that chat's built-ins (`chatId`'s
 * without `asChatId`) from the account's directory, sent to `chatId` alone by a run of
 * trigger `test`. It is sent now (not held by the window or the per-chat interval), at the
 * account's pace, and is none of the campaign's sends: it neither holds nor is held by the
 * campaign's open run, gates no later run, and leaves the schedule as it is (migrations/0015).
 */
export async function startTestSend(
  ctx: ApiContext,
  campaignId: string,
  tenantId: string | null,
  to: { chatId: string; threadId?: number | undefined; asChatId?: string | undefined },
): Promise<RunRow> {
  const runId = randomUUID();
  await ctx.db.transaction().execute(async (trx) => {
    // Locked, so a concurrent DELETE cannot slip between the read and the insert.
    const campaign = await new CampaignRepository(trx).findForUpdate(campaignId, tenantId);
    if (!campaign) throw notFound('campaign');
    if (to.threadId !== undefined) {
      const account = await new AccountRepository(trx).find(campaign.accountId, campaign.tenantId);
      const why = account ? topicRefusal(account.platform) : null;
      if (why !== null) throw invalidField('threadId', why);
    }
    let vars: Record<string, string> | null = null;
    if (to.asChatId !== undefined) {
      // as a run would take them: the inline target's, else the first audience's that lists the chat
      // the chat's first inline target (in a topic, its vars are under its target key)
      const inline = campaign.targets.indexOf(to.asChatId);
      const key = targetKey(to.asChatId, campaign.targetThreads?.[inline]);
      const found = inline !== -1 ? (campaign.targetVars?.[key] ?? null) : await new AudienceMemberRepository(trx).varsOf(campaign.audienceIds, to.asChatId);
      if (found === undefined) throw invalidField('asChatId', "not one of the campaign's chats (its targets and its audiences' members)");
      vars = found;
    }
    if (partsUseBuiltins(campaign.messages)) {
      // as a run takes them: the chat's own variables over its built-ins
      const chat = to.asChatId ?? to.chatId;
      const facts = await new ChatDirectoryRepository(trx).facts(campaign.tenantId, campaign.accountId, [chat]);
      vars = chatVariables(vars, facts.get(chat));
    }
    const now = ctx.now();
    const run = {
      id: runId,
      campaignId: campaign.id,
      tenantId: campaign.tenantId,
      accountId: campaign.accountId,
      parts: campaign.messages,
      scheduledAt: now,
      windowEndAt: null,
      jobId: runJobId(runId, 0),
    };
    await insertTestRun(trx, run, to.chatId, vars, to.threadId ?? 0);
  });
  await enqueue(ctx, runId, 0, 0);
  const run = await ctx.runs.find(runId, null);
  if (!run) throw notFound('run');
  return run;
}
