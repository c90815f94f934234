import type { RunCountsLike } from '@metronome/core';
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Json, MessagePart, NullableTimestamp, PausedReason, RunStatus, RunTrigger, TargetStatus, Timestamp } from './shared.js';

export interface RunsTable {
  id: Generated<string>;
  campaign_id: string;
  tenant_id: string;
  account_id: string;
  trigger: RunTrigger;
  status: Generated<RunStatus>;
  parts: Json<MessagePart[]>;
  total: number;
  scheduled_at: Timestamp;
  started_at: NullableTimestamp;
  first_send_at: NullableTimestamp;
  finished_at: NullableTimestamp;
  window_end_at: NullableTimestamp;
  paused_reason: PausedReason | null;
  error_summary: string | null;
  job_id: string | null;
  job_seq: Generated<number>;
  /** migrations/0007: a run now that does not wait for the per-chat interval */
  ignored_interval: Generated<boolean>;
  /** migrations/0023: the counts kept when the targets went (retention); null before */
  summary_counts: ColumnType<RunCounts | null, string | null, string | null>;
  history_purged_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface RunTargetsTable {
  run_id: string;
  chat_id: string;
  /** migrations/0039: the forum topic (Telegram's message_thread_id), 0 for none; part of the key */
  thread_id: Generated<number>;
  status: Generated<TargetStatus>;
  attempts: Generated<number>;
  parts_sent: Generated<number>;
  next_attempt_at: Generated<Date>;
  lease_owner: string | null;
  lease_expires_at: NullableTimestamp;
  /** migrations/0004: when the request for part `parts_sent` began; null while the claim waits */
  send_started_at: NullableTimestamp;
  /** migrations/0020: when an answer first left its delivery in doubt */
  ambiguous_at: NullableTimestamp;
  sent_at: NullableTimestamp;
  latency_ms: number | null;
  error_code: string | null;
  error_message: string | null;
  message_ids: Generated<string[]>;
  updated_at: Generated<Date>;
  vars: ColumnType<Record<string, string> | null, string | null, string | null>;
  delivered_at: NullableTimestamp;
  read_at: NullableTimestamp;
  replied_at: NullableTimestamp;
  delivered_to: number | null;
  read_by: number | null;
  member_count: number | null;
}

export interface TargetMemberReceiptsTable {
  run_id: string;
  chat_id: string;
  thread_id: Generated<number>;
  member: string;
  delivered_at: NullableTimestamp;
  read_at: NullableTimestamp;
}

export interface RunEventsTable {
  id: Generated<string>;
  run_id: string;
  tenant_id: string;
  status: RunStatus;
  created_at: Generated<Date>;
}

export type Run = Selectable<RunsTable>;
export type RunTarget = Selectable<RunTargetsTable>;

/** Per-status target counts of a run, and what receipts and replies told. */
export interface RunCounts extends RunCountsLike {
  delivered: number;
  read: number;
  replied: number;
}
