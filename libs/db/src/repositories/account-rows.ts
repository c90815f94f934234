import { sql } from 'kysely';
import type { DirectorySyncRow } from './chat-directory-repository.js';
import type { AccountStatus, AccountTyping, AccountWarmup, Platform } from '../types.js';
import type { ProxyShown } from '@metronome/core';

/** An account without its credentials: nothing read here can leak them. */
export interface AccountRow {
  id: string;
  tenantId: string;
  platform: Platform;
  name: string;
  externalId: string | null;
  status: AccountStatus;
  blockedUntil: Date | null;
  /** null: the sender's default applies */
  maxSendPerMinute: number | null;
  groupConcurrency: number | null;
  /** the ban-safety kit (migrations/0009); null: not set */
  sendDelaySeconds: { min: number; max: number } | null;
  hourlyCap: number | null;
  dailyCap: number | null;
  warmup: AccountWarmup | null;
  /** replies that opt a chat out (migrations/0011); empty: none */
  optOutKeywords: string[];
  /** typing before each message (migrations/0011); null: none */
  typing: AccountTyping | null;
  /** the platform drops a repeated Idempotency-Key (migrations/0020) */
  platformDeduplicates: boolean;
  /** automatic cooling (migrations/0012): set while `cooling` */
  cooling: { since: Date; until: Date | null; reason: string } | null;
  /** the pace factor as written, and when its recovery counts from (libs/core paceFactorAt) */
  paceFactor: number;
  paceSince: Date | null;
  /** where the chat directory's sync stands (migrations/0016); null: never synced */
  directory: DirectorySyncRow | null;
  /** its proxy as shown (migrations/0035), and why it failed last; null: none */
  proxy: (ProxyShown & { failure: { message: string; at: Date } | null }) | null;
  createdAt: Date;
  cursorAt: string;
}

/** The columns an AccountRow is read from (never `credentials` nor `proxy`: nothing read here can leak them). */
export const COLUMNS = [
  'id',
  'tenant_id',
  'platform',
  'name',
  'external_id',
  'status',
  'blocked_until',
  'max_send_per_minute',
  'group_concurrency',
  'send_delay_min_seconds',
  'send_delay_max_seconds',
  'hourly_cap',
  'daily_cap',
  'warmup',
  'opt_out_keywords',
  'typing',
  'platform_deduplicates',
  'cooling_since',
  'cooling_until',
  'cooling_reason',
  'pace_factor',
  'pace_since',
  'proxy_shown',
  'proxy_failure',
  'proxy_failed_at',
  // one row by primary key, or none
  sql<RawDirectory | null>`(select json_build_object('status', s.status, 'synced', s.synced, 'size', s.size, 'until', s.until,
    'reason', s.reason, 'lastSyncAt', s.last_sync_at, 'requestedAt', s.requested_at) from chat_directory_syncs s where s.account_id = accounts.id)`.as(
    'directory',
  ),
  'created_at',
  sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at'),
] as const;

export type Raw = {
  id: string;
  tenant_id: string;
  platform: Platform;
  name: string;
  external_id: string | null;
  status: AccountStatus;
  blocked_until: Date | null;
  max_send_per_minute: number | null;
  group_concurrency: number | null;
  send_delay_min_seconds: number | null;
  send_delay_max_seconds: number | null;
  hourly_cap: number | null;
  daily_cap: number | null;
  warmup: AccountWarmup | null;
  opt_out_keywords: string[];
  typing: AccountTyping | null;
  platform_deduplicates: boolean;
  cooling_since: Date | null;
  cooling_until: Date | null;
  cooling_reason: string | null;
  pace_factor: number;
  pace_since: Date | null;
  proxy_shown: ProxyShown | null;
  proxy_failure: string | null;
  proxy_failed_at: Date | null;
  directory: RawDirectory | null;
  created_at: Date;
  cursor_at: string;
};

/** The sync row as json_build_object gives it: times as text. */
type RawDirectory = Omit<DirectorySyncRow, 'until' | 'lastSyncAt' | 'requestedAt'> & {
  until: string | null;
  lastSyncAt: string | null;
  requestedAt: string | null;
};

const dateOrNull = (text: string | null): Date | null => (text === null ? null : new Date(text));

export function toAccount(a: Raw): AccountRow {
  return {
    id: a.id,
    tenantId: a.tenant_id,
    platform: a.platform,
    name: a.name,
    externalId: a.external_id,
    status: a.status,
    blockedUntil: a.blocked_until,
    maxSendPerMinute: a.max_send_per_minute,
    groupConcurrency: a.group_concurrency,
    sendDelaySeconds:
      a.send_delay_min_seconds === null || a.send_delay_max_seconds === null ? null : { min: a.send_delay_min_seconds, max: a.send_delay_max_seconds },
    hourlyCap: a.hourly_cap,
    dailyCap: a.daily_cap,
    warmup: a.warmup,
    optOutKeywords: a.opt_out_keywords,
    typing: a.typing,
    platformDeduplicates: a.platform_deduplicates,
    cooling:
      a.status === 'cooling' && (a.cooling_since ?? a.cooling_until)
        ? { since: (a.cooling_since ?? a.cooling_until)!, until: a.cooling_until, reason: a.cooling_reason ?? 'cooling' }
        : null,
    paceFactor: a.pace_factor,
    paceSince: a.pace_since,
    directory: a.directory && {
      ...a.directory,
      until: dateOrNull(a.directory.until),
      lastSyncAt: dateOrNull(a.directory.lastSyncAt),
      requestedAt: dateOrNull(a.directory.requestedAt),
    },
    proxy: a.proxy_shown && {
      ...a.proxy_shown,
      failure: a.proxy_failure === null ? null : { message: a.proxy_failure, at: a.proxy_failed_at ?? a.created_at },
    },
    createdAt: a.created_at,
    cursorAt: a.cursor_at,
  };
}
