import type { RunStatusName } from '@metronome/core';
import type { ColumnType } from 'kysely';

// Column types and values shared by the schema's tables (Kysely's view of migrations/*.sql: keep in step).
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>;
export type Json<T> = ColumnType<T, string, string>;

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
