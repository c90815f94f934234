import type { ProxyShown } from '@metronome/core';
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import type { AccountStatus, NullableTimestamp, Platform, Timestamp } from './shared.js';

export interface AccountsTable {
  id: Generated<string>;
  tenant_id: string;
  platform: Platform;
  name: string;
  external_id: string | null;
  credentials: Buffer | null;
  status: Generated<AccountStatus>;
  blocked_until: NullableTimestamp;
  /** null: the sender's default applies (as for group_concurrency) */
  max_send_per_minute: number | null;
  group_concurrency: number | null;
  /** migrations/0009: the ban-safety kit (null: not set) */
  send_delay_min_seconds: number | null;
  send_delay_max_seconds: number | null;
  hourly_cap: number | null;
  daily_cap: number | null;
  warmup: ColumnType<AccountWarmup | null, string | null, string | null>;
  /** migrations/0042: the settings of limits without a column, by field (libs/core LIMIT_SETTINGS) */
  limits: ColumnType<Record<string, unknown>, string | undefined, string>;
  /** migrations/0011: replies that opt a chat out (WhatsApp); empty: none */
  opt_out_keywords: Generated<string[]>;
  /** migrations/0011: typing before each message; null: none */
  typing: ColumnType<AccountTyping | null, string | null, string | null>;
  /** migrations/0020: the platform drops a repeated Idempotency-Key (http): doubtful sends are settled by sending again */
  platform_deduplicates: Generated<boolean>;
  /** migrations/0043: kept connected whether or not a run sends (whatsapp, telegram_user), or opened by its jobs only */
  connection: Generated<'always' | 'on_demand'>;
  /** migrations/0012: automatic cooling and the pace factor */
  cooling_since: NullableTimestamp;
  cooling_until: NullableTimestamp;
  cooling_reason: string | null;
  /** migrations/0041: which restriction while `cooling` for `restricted` (a send result code) */
  restricted_because: string | null;
  /** migrations/0025: when a receipt first matched one of its sends (only such accounts are judged not delivering) */
  receipts_seen_at: NullableTimestamp;
  last_cooled_at: NullableTimestamp;
  last_cooling_ms: number | null;
  /** the pace factor as written, and when its recovery counts from (libs/core paceFactorAt) */
  pace_factor: Generated<number>;
  pace_since: NullableTimestamp;
  flood_waits: ColumnType<Date[], Date[] | undefined, Date[]>;
  send_outcomes: Generated<string>;
  /** migrations/0035: the proxy URL, sealed; what is shown of it; why it failed last */
  proxy: Buffer | null;
  proxy_shown: ColumnType<ProxyShown | null, string | null, string | null>;
  proxy_failure: string | null;
  proxy_failed_at: NullableTimestamp;
  /** migrations/0038: what WhatsApp lets the account do with new chats (libs/core new-chat-limits.ts) */
  new_chats_refused_at: NullableTimestamp;
  reachout_lock_until: NullableTimestamp;
  reachout_lock_type: string | null;
  new_chat_cap: ColumnType<StoredNewChatCap | null, string | null, string | null>;
  /** migrations/0023: deleted; the row stays while runs of it are kept */
  deleted_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** The new-chat cap as stored (accounts.new_chat_cap): NewChatCap with its times as ISO text. */
export interface StoredNewChatCap {
  status: string;
  total: number | null;
  used: number | null;
  cycleEndsAt: string | null;
  toldAt: string;
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

/** migrations/0040: the peers (and access hashes) a telegram_user account learnt */
export interface TelegramPeersTable {
  account_id: string;
  chat_id: string;
  kind: 'user' | 'chat' | 'channel';
  access_hash: string | null;
  username: string | null;
  learnt_at: Date;
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

export type Account = Selectable<AccountsTable>;
export type NewAccount = Insertable<AccountsTable>;
export type AccountUpdate = Updateable<AccountsTable>;

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
