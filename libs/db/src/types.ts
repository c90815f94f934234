import type { RunStatusName } from '@metronome/core';
import type { ColumnType, Generated, Selectable, Insertable, Updateable } from 'kysely';

/** Kysely's view of the schema in migrations/*.sql. Keep in step with the SQL. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>;
type Json<T> = ColumnType<T, string, string>;

export type Platform = 'http' | 'telegram' | 'telegram_user' | 'whatsapp';
export type AccountStatus = 'active' | 'disabled' | 'disconnected' | 'pairing' | 'cooling';
/** One definition of the run statuses: RUN_STATUSES in libs/core. */
export type RunStatus = RunStatusName;
/** `test`: a test send (migrations/0015), never counted as a send of its campaign. */
export type RunTrigger = 'schedule' | 'manual' | 'test';
export type PausedReason = 'window_closed' | 'operator' | 'account_unavailable';
export type TargetStatus = 'pending' | 'in_flight' | 'sent' | 'failed' | 'skipped' | 'unknown';

export type CatchUpPolicy = 'skip' | 'latest' | 'all';

export type MessagePart = { type: 'text'; text: string } | { type: 'media'; mediaId: string; caption?: string };

/** A campaign's targets given with variables (personal messages): chat id → {name: value}. */
export type TargetVarsByChat = Record<string, Record<string, string>>;

export type Schedule = { type: 'interval'; everySeconds: number; startAt?: string } | { type: 'cron'; expression: string } | { type: 'once'; at: string };

export interface TenantsTable {
  id: Generated<string>;
  name: string;
  token_hash: string;
  created_at: Generated<Date>;
  /** migrations/0023: a history retention shorter than HISTORY_RETENTION; null: the default */
  history_retention_ms: ColumnType<string | null, number | null | undefined, number | null>;
  /** migrations/0023: deleted; its rows go in batches */
  deleted_at: NullableTimestamp;
  /** migrations/0023: the salt of its erased chats' hashes */
  chat_salt: Generated<Buffer>;
}

export interface AccountsTable {
  id: Generated<string>;
  tenant_id: string;
  platform: Platform;
  name: string;
  external_id: string | null;
  credentials: Buffer | null;
  status: Generated<AccountStatus>;
  blocked_until: NullableTimestamp;
  max_send_per_minute: number | null;
  group_concurrency: number | null;
  /** migrations/0009: the ban-safety kit (null: not set) */
  send_delay_min_seconds: number | null;
  send_delay_max_seconds: number | null;
  hourly_cap: number | null;
  daily_cap: number | null;
  warmup: ColumnType<AccountWarmup | null, string | null, string | null>;
  /** migrations/0011: replies that opt a chat out (WhatsApp); empty: none */
  opt_out_keywords: Generated<string[]>;
  /** migrations/0011: typing before each message; null: none */
  typing: ColumnType<AccountTyping | null, string | null, string | null>;
  /** migrations/0020: the platform drops a repeated Idempotency-Key (http): doubtful sends are settled by sending again */
  platform_deduplicates: Generated<boolean>;
  /** migrations/0012: automatic cooling and the pace factor */
  cooling_since: NullableTimestamp;
  cooling_until: NullableTimestamp;
  cooling_reason: string | null;
  /** migrations/0025: when a receipt first matched one of its sends (only such accounts are judged not delivering) */
  receipts_seen_at: NullableTimestamp;
  last_cooled_at: NullableTimestamp;
  last_cooling_ms: number | null;
  pace_factor: Generated<number>;
  pace_since: NullableTimestamp;
  flood_waits: ColumnType<Date[], Date[] | undefined, Date[]>;
  send_outcomes: Generated<string>;
  /** migrations/0023: deleted; the row stays while runs of it are kept */
  deleted_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** An account's typing (accounts.typing): `charsPerSecond` of text, at most `maxSeconds`. */
export interface AccountTyping {
  charsPerSecond: number;
  maxSeconds: number;
}

/** An account's warm-up (accounts.warmup): `startedAt` an ISO time; a step's null dailyCap ends it. */
export interface AccountWarmup {
  startedAt: string;
  steps: { afterDays: number; dailyCap: number | null }[];
}

/** migrations/0009: chats an account does not write to again. */
export interface AccountSuppressionsTable {
  account_id: string;
  chat_id: string;
  reason: string;
  created_at: Generated<Date>;
}

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
  /** migrations/0015: the audiences whose members each run also sends to */
  audience_ids: Generated<string[]>;
  active: Generated<boolean>;
  auto_resume: Generated<boolean>;
  next_run_at: NullableTimestamp;
  paused_reason: string | null;
  /** migrations/0004: why the scheduler deactivated this campaign (null when it did not) */
  last_error: string | null;
  no_account_streak: Generated<number>;
  /** migrations/0007: catch-up after downtime */
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

/** migrations/0015: one chat of an audience, with its variables. */
export interface AudienceMembersTable {
  audience_id: string;
  chat_id: string;
  vars: ColumnType<Record<string, string> | null, string | null, string | null>;
  /** the chat id and the values, folded for search, joined by U+001F */
  search: string;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

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
  status: Generated<TargetStatus>;
  attempts: Generated<number>;
  parts_sent: Generated<number>;
  next_attempt_at: Generated<Date>;
  lease_owner: string | null;
  lease_expires_at: NullableTimestamp;
  /** migrations/0004: when the request for part `parts_sent` began; null while the claim waits */
  send_started_at: NullableTimestamp;
  /** migrations/0020: when an answer first left its delivery in doubt and it was sent again to settle it */
  ambiguous_at: NullableTimestamp;
  sent_at: NullableTimestamp;
  latency_ms: number | null;
  error_code: string | null;
  error_message: string | null;
  message_ids: Generated<string[]>;
  updated_at: Generated<Date>;
  /** migrations/0010: the run's copy of the chat's variables (personal messages); null when none */
  vars: ColumnType<Record<string, string> | null, string | null, string | null>;
  /** migrations/0022: the earliest delivery / read a receipt told (groups: the first member's) */
  delivered_at: NullableTimestamp;
  read_at: NullableTimestamp;
  /** migrations/0022: the chat's first message within REPLY_WINDOW after the send */
  replied_at: NullableTimestamp;
  /** migrations/0022: groups: members that got / read it, out of member_count when known */
  delivered_to: number | null;
  read_by: number | null;
  member_count: number | null;
}

/** migrations/0022: a group's receipts per member (a receipt told twice counts once) */
export interface TargetMemberReceiptsTable {
  run_id: string;
  chat_id: string;
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

export interface SchedulerLeaderTable {
  id: Generated<number>;
  fence: Generated<number>;
  holder: string | null;
  acquired_at: NullableTimestamp;
}

/** migrations/0003_whatsapp.sql: one sealed row per credential set or Signal key */
export interface WhatsappAuthTable {
  account_id: string;
  kind: string;
  key_id: string;
  sealed: Buffer;
  updated_at: Generated<Date>;
}

/** migrations/0018_whatsapp_sent_messages.sql: a sent message kept for decryption retries */
export interface WhatsappSentMessagesTable {
  account_id: string;
  message_id: string;
  message: Buffer;
  sent_at: Date;
}

/** migrations/0028_whatsapp_identities.sql: a LID and the phone-number JID it stands for */
export interface WhatsappIdentitiesTable {
  account_id: string;
  lid: string;
  pn: string;
  learnt_at: Date;
}

export type WebhookEventType = 'run.status' | 'account.status' | 'message.status';
export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** migrations/0008_webhooks.sql: a tenant's webhook; `secret` sealed */
export interface WebhooksTable {
  id: Generated<string>;
  tenant_id: string;
  url: string;
  events: WebhookEventType[];
  secret: Buffer;
  active: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** migrations/0008_webhooks.sql: the outbox, one row per (webhook, event) */
export interface WebhookDeliveriesTable {
  id: Generated<string>;
  seq: Generated<string>;
  webhook_id: string;
  tenant_id: string;
  type: WebhookEventType;
  subject_id: string;
  payload: Json<Record<string, unknown>>;
  status: Generated<WebhookDeliveryStatus>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  retry_from: NullableTimestamp;
  lease_owner: string | null;
  lease_until: NullableTimestamp;
  last_attempt_at: NullableTimestamp;
  last_http_status: number | null;
  last_error: string | null;
  delivered_at: NullableTimestamp;
  created_at: Generated<Date>;
}

/** migrations/0016: an account's chats as its platform lists them (CONTRACT §3, "Chat directory") */
export interface ChatDirectoryTable {
  account_id: string;
  chat_id: string;
  title: string | null;
  /** foldForSearch(title) + U+001F + foldForSearch(chat_id): searched, and the listing's order */
  title_folded: string;
  kind: 'group' | 'direct' | 'channel';
  member_count: number | null;
  can_send: boolean;
  cannot_send_reason: string | null;
  last_sync_at: Timestamp;
  updated_at: Timestamp;
}

export type DirectorySyncStatus = 'syncing' | 'ok' | 'backing_off' | 'unsupported' | 'failed';

/** migrations/0016: where an account's directory sync stands; no row: never synced */
export interface ChatDirectorySyncsTable {
  account_id: string;
  status: DirectorySyncStatus;
  synced: Generated<number>;
  size: Generated<number>;
  until: NullableTimestamp;
  reason: string | null;
  last_sync_at: NullableTimestamp;
  requested_at: NullableTimestamp;
  updated_at: Timestamp;
}

/** migrations/0023: a chat erased from a tenant, kept only as sha256(tenant salt || chat id) */
export interface ErasedChatsTable {
  tenant_id: string;
  chat_hash: Buffer;
  created_at: Generated<Date>;
}

export interface DB {
  tenants: TenantsTable;
  accounts: AccountsTable;
  account_suppressions: AccountSuppressionsTable;
  media: MediaTable;
  media_uploads: MediaUploadsTable;
  campaigns: CampaignsTable;
  audiences: AudiencesTable;
  audience_members: AudienceMembersTable;
  runs: RunsTable;
  run_targets: RunTargetsTable;
  run_events: RunEventsTable;
  scheduler_leader: SchedulerLeaderTable;
  whatsapp_auth: WhatsappAuthTable;
  whatsapp_sent_messages: WhatsappSentMessagesTable;
  whatsapp_identities: WhatsappIdentitiesTable;
  target_member_receipts: TargetMemberReceiptsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  chat_directory: ChatDirectoryTable;
  telegram_sign_ins: TelegramSignInsTable;
  chat_directory_syncs: ChatDirectorySyncsTable;
  erased_chats: ErasedChatsTable;
}

export type Tenant = Selectable<TenantsTable>;
export type Account = Selectable<AccountsTable>;
export type NewAccount = Insertable<AccountsTable>;
export type AccountUpdate = Updateable<AccountsTable>;
export type Media = Selectable<MediaTable>;
export type Campaign = Selectable<CampaignsTable>;
export type NewCampaign = Insertable<CampaignsTable>;
export type CampaignUpdate = Updateable<CampaignsTable>;
export type Run = Selectable<RunsTable>;
export type RunTarget = Selectable<RunTargetsTable>;

/** Per-status target counts of a run, as the API shows them. */
export interface RunCounts {
  total: number;
  pending: number;
  inFlight: number;
  sent: number;
  failed: number;
  skipped: number;
  unknown: number;
  /** targets a receipt said were delivered (groups: to at least one member) / read; chats that answered */
  delivered: number;
  read: number;
  replied: number;
}

export type TelegramSignInState = 'code_sent' | 'qr_shown' | 'password_needed' | 'failed';

/** migrations/0031: a Telegram user account's sign-in in progress */
export interface TelegramSignInsTable {
  account_id: string;
  state: TelegramSignInState;
  phone: string;
  qr_url: string | null;
  qr_expires_at: Timestamp | null;
  phone_code_hash: string | null;
  /** sealed: the session (auth key) not yet signed in */
  session: Buffer | null;
  error_code: string | null;
  error_field: string | null;
  error_message: string | null;
  updated_at: Timestamp;
}
