import { RUN_STATUSES, WAITING_REASONS, type Waiting, type WaitingReason } from '@metronome/core';
import type { RunCounts, RunRow, TargetRow } from '@metronome/db';
import { z } from 'zod';
import { chatId, id, iso, isoOrNull, pageOf, pageQuery, threadId, time } from './common.js';

export const runStatus = z.enum(RUN_STATUSES);
export const targetStatus = z.enum(['pending', 'in_flight', 'sent', 'failed', 'skipped', 'unknown']);

export const counts = z
  .object({
    total: z.number().int(),
    pending: z.number().int(),
    inFlight: z.number().int(),
    sent: z.number().int(),
    failed: z.number().int(),
    skipped: z.number().int(),
    unknown: z.number().int(),
    delivered: z
      .number()
      .int()
      .describe('*(extension)* targets a receipt said were delivered (groups: to at least one member); 0 on platforms without receipts'),
    read: z.number().int().describe('*(extension)* targets a receipt said were read'),
    replied: z.number().int().describe('*(extension)* targets whose chat wrote within REPLY_WINDOW after the send'),
  })
  .meta({ id: 'RunCounts' });

export const waiting = z
  .object({
    reason: z
      .enum(WAITING_REASONS as readonly [WaitingReason, ...WaitingReason[]])
      .describe('what holds it; CONTRACT §3 lists each reason and their precedence'),
    until: time.nullable().describe('when the hold ends; null when not known'),
    detail: z.string().describe("one plain sentence, times in the campaign's timezone"),
  })
  .nullable()
  .describe('why it is not sending right now; null when nothing holds it')
  .meta({ id: 'Waiting' });

export const run = z
  .object({
    id,
    tenantId: id,
    campaignId: id,
    accountId: id,
    trigger: z.enum(['schedule', 'manual', 'test']).describe('test: a test send (POST /v1/campaigns/{id}/test-sends), never counted as a send of the campaign'),
    status: runStatus,
    scheduledAt: time,
    startedAt: time.nullable(),
    finishedAt: time.nullable(),
    windowEndAt: time.nullable(),
    counts,
    pausedReason: z.enum(['window_closed', 'operator', 'account_unavailable']).nullable(),
    errorSummary: z.string().nullable(),
    ignoredInterval: z.boolean().describe('a run now asked to reach every chat at once, not held by the per-chat interval of an interval campaign'),
    historyPurgedAt: time
      .nullable()
      .describe('when history retention removed its chats (targets) and events; its counts, status and times stay. null: not yet'),
    createdAt: time,
    waiting,
    eta: time.nullable().describe("when it is expected to finish at the account's pace; null when it is not sending or cannot finish inside its window"),
  })
  .meta({ id: 'Run' });

export const runPage = pageOf(run);

/** `POST /v1/campaigns/{id}/runs`: the body is optional. */
export const runNowBody = z
  .strictObject({
    ignoreInterval: z
      .boolean()
      .default(false)
      .describe(
        "true: send now to every chat; false (default): each chat of an interval campaign still waits for the campaign's interval since its last delivery (waiting says interval_gate)",
      ),
  })
  .meta({ id: 'RunNow' });

/** `POST /v1/campaigns/{id}/test-sends`. */
export const testSendBody = z
  .strictObject({
    chatId: chatId.describe('the chat that receives the test'),
    threadId: threadId
      .optional()
      .describe("the forum topic of chatId that receives the test (Telegram's message_thread_id; telegram and telegram_user accounts only)"),
    asChatId: chatId
      .optional()
      .describe("one of the campaign's chats (a target or an audience member): the test is rendered with its variables; without it, with none"),
  })
  .meta({ id: 'TestSend' });

export const listRunsQuery = z.object({
  status: runStatus.optional(),
  campaignId: id.optional(),
  accountId: id.optional().describe("runs sent from this account (the run's accountId, fixed when the run was created)"),
  tenantId: id
    .optional()
    .describe("admin: that tenant's runs only. A tenant token may name its own id; another tenant's id gets an empty page, as a foreign campaignId does"),
  ...pageQuery,
});

const flag = z.enum(['true', 'false']).transform((v) => v === 'true');

export const listTargetsQuery = z.object({
  status: targetStatus.optional(),
  delivered: flag.optional().describe('*(extension)* true: targets a receipt said were delivered; false: the others'),
  read: flag.optional().describe('*(extension)* true: targets a receipt said were read; false: the others'),
  replied: flag.optional().describe('*(extension)* true: targets whose chat replied; false: the others'),
  ...pageQuery,
});

export const target = z
  .object({
    chatId: z.string(),
    title: z
      .string()
      .nullable()
      .describe("*(extension)* the chat's title in the run's account's chat directory, else its own `name` variable (an audience member's); null: neither"),
    threadId: z.number().int().nullable().describe("*(extension)* the forum topic of the chat it posts into (Telegram's message_thread_id); null: none"),
    status: targetStatus,
    attempts: z.number().int(),
    nextAttemptAt: time.nullable().describe('null: due at once'),
    sentAt: time.nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    settledBy: z
      .enum(['platform'])
      .nullable()
      .describe('*(extension)* `platform`: its delivery was in doubt, and a re-send with the same key to a platform that deduplicates settled it'),
    deliveredAt: time
      .nullable()
      .describe('*(extension)* the earliest delivery a receipt told (groups: the first member); null: none yet, or the platform has no receipts'),
    readAt: time.nullable().describe('*(extension)* the earliest read a receipt told'),
    repliedAt: time.nullable().describe("*(extension)* the chat's first message within REPLY_WINDOW after the send"),
    deliveredTo: z.number().int().nullable().describe('*(extension)* groups: members a receipt said got it; null for one-to-one chats'),
    readBy: z.number().int().nullable().describe('*(extension)* groups: members a receipt said read it'),
    memberCount: z.number().int().nullable().describe('*(extension)* groups: members it went to, when known'),
    waiting,
  })
  .meta({ id: 'RunTarget' });

export const targetPage = pageOf(target);

/** What a run is waiting for, and when it should finish (computed by libs/core from the truth). */
export interface RunExplanation {
  waiting: Waiting | null;
  eta: Date | null;
}

export function waitingView(w: Waiting | null): z.output<typeof waiting> {
  return w === null ? null : { reason: w.reason, until: w.until ? iso(w.until) : null, detail: w.detail };
}

/** A run's answer: its row, its counts and its explanation (run-views.ts builds all three). */
export function runView(r: RunRow, c: RunCounts, e: RunExplanation): z.output<typeof run> {
  return {
    id: r.id,
    tenantId: r.tenantId,
    campaignId: r.campaignId,
    accountId: r.accountId,
    trigger: r.trigger,
    status: r.status,
    scheduledAt: iso(r.scheduledAt),
    startedAt: isoOrNull(r.startedAt),
    finishedAt: isoOrNull(r.finishedAt),
    windowEndAt: isoOrNull(r.windowEndAt),
    counts: c,
    pausedReason: r.pausedReason,
    errorSummary: r.errorSummary,
    ignoredInterval: r.ignoredInterval,
    historyPurgedAt: isoOrNull(r.historyPurgedAt),
    createdAt: iso(r.createdAt),
    waiting: waitingView(e.waiting),
    eta: e.eta ? iso(e.eta) : null,
  };
}

export function targetView(t: TargetRow, w: Waiting | null): z.output<typeof target> {
  return {
    chatId: t.chatId,
    title: t.title,
    threadId: t.threadId,
    status: t.status,
    attempts: t.attempts,
    nextAttemptAt: t.nextAttemptAt && Number.isFinite(t.nextAttemptAt.getTime()) ? iso(t.nextAttemptAt) : null,
    sentAt: isoOrNull(t.sentAt),
    error: t.errorCode === null ? null : { code: t.errorCode, message: t.errorMessage ?? '' },
    settledBy: t.settledBy,
    deliveredAt: isoOrNull(t.deliveredAt),
    readAt: isoOrNull(t.readAt),
    repliedAt: isoOrNull(t.repliedAt),
    deliveredTo: t.deliveredTo,
    readBy: t.readBy,
    memberCount: t.memberCount,
    waiting: waitingView(w),
  };
}
