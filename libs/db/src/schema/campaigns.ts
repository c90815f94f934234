import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { CatchUpPolicy, Json, MessagePart, NullableTimestamp, Schedule, TargetVarsByChat, Timestamp } from './shared.js';

export interface MediaTable {
  id: Generated<string>;
  tenant_id: string;
  content_type: string;
  size: number;
  sha256: string;
  filename: string | null;
  bytes: Buffer | null;
  storage_key: string | null;
  created_at: Generated<Date>;
}

export interface MediaUploadsTable {
  account_id: string;
  media_id: string;
  ref: string;
  expires_at: Timestamp;
  created_at: Generated<Date>;
}

export interface CampaignsTable {
  id: Generated<string>;
  tenant_id: string;
  account_id: string;
  name: string;
  timezone: string;
  schedule: Json<Schedule>;
  window_start: Generated<string>;
  window_end: Generated<string>;
  messages: Json<MessagePart[]>;
  targets: string[];
  /** migrations/0010: {chatId: {name: value}} for targets given with variables; null when none */
  target_vars: ColumnType<TargetVarsByChat | null, string | null, string | null>;
  /** migrations/0039: each target's forum topic in the order of targets (0: none); null when none names one */
  target_threads: ColumnType<number[] | null, number[] | null | undefined, number[] | null>;
  /** migrations/0015: the audiences whose members each run also sends to */
  audience_ids: Generated<string[]>;
  active: Generated<boolean>;
  auto_resume: Generated<boolean>;
  next_run_at: NullableTimestamp;
  paused_reason: string | null;
  last_error: string | null;
  no_account_streak: Generated<number>;
  catch_up_policy: Generated<CatchUpPolicy>;
  catch_up_max_lateness_seconds: number | null;
  catch_up_through: NullableTimestamp;
  skipped_count: ColumnType<string, never, never>;
  last_skipped_at: NullableTimestamp;
  deleted_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** migrations/0015: a tenant's reusable list of chats. */
export interface AudiencesTable {
  id: Generated<string>;
  tenant_id: string;
  name: string;
  member_count: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface AudienceMembersTable {
  audience_id: string;
  chat_id: string;
  thread_id: Generated<number>;
  vars: ColumnType<Record<string, string> | null, string | null, string | null>;
  /** the chat id and the values, folded for search, joined by U+001F */
  search: string;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type Media = Selectable<MediaTable>;
export type Campaign = Selectable<CampaignsTable>;
export type NewCampaign = Insertable<CampaignsTable>;
export type CampaignUpdate = Updateable<CampaignsTable>;
