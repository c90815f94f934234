import { sql } from 'kysely';
import type { PausedReason, RunStatus, RunTrigger, TargetStatus } from '../types.js';

/** A run as the control API shows it (counts from countRuns). */
export interface RunRow {
  id: string;
  tenantId: string;
  campaignId: string;
  accountId: string;
  trigger: RunTrigger;
  status: RunStatus;
  total: number;
  scheduledAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  windowEndAt: Date | null;
  pausedReason: PausedReason | null;
  errorSummary: string | null;
  jobSeq: number;
  ignoredInterval: boolean;
  historyPurgedAt: Date | null;
  createdAt: Date;
  /** created_at with microseconds, for cursors */
  cursorAt: string;
}

export interface RunWithWindow extends RunRow {
  timezone: string;
  windowStart: string;
  windowEnd: string;
}

export interface TargetRow {
  chatId: string;
  /** the directory's title, else the chat's `name` variable */
  title: string | null;
  threadId: number | null;
  status: TargetStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  sentAt: Date | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** `platform`: a doubtful delivery settled by a re-send with the same key (migrations/0020) */
  settledBy: 'platform' | null;
  deliveredAt: Date | null;
  readAt: Date | null;
  repliedAt: Date | null;
  deliveredTo: number | null;
  readBy: number | null;
  memberCount: number | null;
}

export interface RunEventRow {
  id: number;
  runId: string;
  tenantId: string;
  campaignId: string;
  campaignName: string;
  status: RunStatus;
}

export const RUN_COLUMNS = sql`r.id, r.tenant_id, r.campaign_id, r.account_id, r.trigger, r.status, r.total, r.scheduled_at,
  r.started_at, r.finished_at, r.window_end_at, r.paused_reason, r.error_summary, r.job_seq, r.ignored_interval, r.history_purged_at, r.created_at,
  to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at`;

export interface RawRun {
  id: string;
  tenant_id: string;
  campaign_id: string;
  account_id: string;
  trigger: RunTrigger;
  status: RunStatus;
  total: number;
  scheduled_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  window_end_at: Date | null;
  paused_reason: PausedReason | null;
  error_summary: string | null;
  job_seq: number;
  ignored_interval: boolean;
  history_purged_at: Date | null;
  created_at: Date;
  cursor_at: string;
}

export function toRun(r: RawRun): RunRow {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    campaignId: r.campaign_id,
    accountId: r.account_id,
    trigger: r.trigger,
    status: r.status,
    total: r.total,
    scheduledAt: r.scheduled_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    windowEndAt: r.window_end_at,
    pausedReason: r.paused_reason,
    errorSummary: r.error_summary,
    jobSeq: r.job_seq,
    ignoredInterval: r.ignored_interval,
    historyPurgedAt: r.history_purged_at,
    createdAt: r.created_at,
    cursorAt: r.cursor_at,
  };
}

// Built per call: `tenant_id = $1 or $1 is null` would defeat runs_tenant_idx.
export function scope(tenantId: string | null) {
  return tenantId === null ? sql`true` : sql`r.tenant_id = ${tenantId}::uuid`;
}
