// An account as the repositories read it: the columns' types from the schema (AccountsTable),
// derived here once, and the few fields read in a shape of their own.
import type { NewChatLimits, ProxyShown } from '@metronome/core';
import { sql } from 'kysely';
import type { Account } from '../types.js';
import type { DirectorySyncRow } from './chat-directory-repository.js';

/** snake_case → camelCase, as a column's name becomes a field's. */
type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
const camel = (s: string): string => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** Columns an AccountRow has as they are, each as its camelCased field (AccountsTable says what each holds). */
const PLAIN = [
  'id',
  'tenant_id',
  'platform',
  'name',
  'external_id',
  'status',
  'blocked_until',
  'max_send_per_minute',
  'group_concurrency',
  'hourly_cap',
  'daily_cap',
  'warmup',
  'limits',
  'opt_out_keywords',
  'typing',
  'platform_deduplicates',
  'connection',
  'pace_factor',
  'pace_since',
  'created_at',
] as const satisfies readonly (keyof Account)[];
/** Columns an AccountRow has in a shape of its own (sendDelaySeconds, cooling, proxy); never `credentials` nor `proxy` itself: nothing read here can leak them. */
const SHAPED = [
  'send_delay_min_seconds',
  'send_delay_max_seconds',
  'cooling_since',
  'cooling_until',
  'cooling_reason',
  'restricted_because',
  'proxy_shown',
  'proxy_failure',
  'proxy_failed_at',
  'new_chats_refused_at',
  'reachout_lock_until',
  'reachout_lock_type',
  'new_chat_cap',
] as const satisfies readonly (keyof Account)[];
type Plain = (typeof PLAIN)[number];
type PlainFields = { [C in Plain as Camel<C>]: Account[C] };

/**
 * An account without its credentials: nothing read here can leak them. Its fields are the
 * columns' types from the schema (AccountsTable), derived here once.
 */
export type AccountRow = PlainFields & {
  /** the ban-safety kit (migrations/0009); null: not set */
  sendDelaySeconds: { min: number; max: number } | null;
  /** automatic cooling (migrations/0012): set while `cooling` */
  cooling: { since: Date; until: Date | null; reason: string; restrictedBecause: string | null } | null;
  /** where the chat directory's sync stands (migrations/0016); null: never synced */
  directory: DirectorySyncRow | null;
  /** its proxy as shown (migrations/0035), and why it failed last; null: none */
  proxy: (ProxyShown & { failure: { message: string; at: Date } | null }) | null;
  /** what WhatsApp lets it do with new chats (migrations/0038); null: nothing was ever told */
  newChats: NewChatLimits | null;
  /** created_at as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (microseconds), for cursors */
  cursorAt: string;
};

export const COLUMNS = [
  ...PLAIN,
  ...SHAPED,
  // one row by primary key, or none
  sql<RawDirectory | null>`(select json_build_object('status', s.status, 'synced', s.synced, 'size', s.size, 'until', s.until,
    'reason', s.reason, 'lastSyncAt', s.last_sync_at, 'requestedAt', s.requested_at) from chat_directory_syncs s where s.account_id = accounts.id)`.as(
    'directory',
  ),
  sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as('cursor_at'),
] as const;

/** An account as COLUMNS read it. */
export type Raw = Pick<Account, Plain | (typeof SHAPED)[number]> & { directory: RawDirectory | null; cursor_at: string };

/** The sync row as json_build_object gives it: times as text. */
type RawDirectory = Omit<DirectorySyncRow, 'until' | 'lastSyncAt' | 'requestedAt'> & {
  until: string | null;
  lastSyncAt: string | null;
  requestedAt: string | null;
};

const dateOrNull = (text: string | null): Date | null => (text === null ? null : new Date(text));

export function toAccount(a: Raw): AccountRow {
  const plain = Object.fromEntries(PLAIN.map((c) => [camel(c), a[c]])) as PlainFields;
  return {
    ...plain,
    sendDelaySeconds:
      a.send_delay_min_seconds === null || a.send_delay_max_seconds === null ? null : { min: a.send_delay_min_seconds, max: a.send_delay_max_seconds },
    cooling:
      a.status === 'cooling' && (a.cooling_since ?? a.cooling_until)
        ? {
            since: (a.cooling_since ?? a.cooling_until)!,
            until: a.cooling_until,
            reason: a.cooling_reason ?? 'cooling',
            restrictedBecause: a.cooling_reason === 'restricted' ? a.restricted_because : null,
          }
        : null,
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
    newChats: newChatLimitsOf(a),
    cursorAt: a.cursor_at,
  };
}

/** The new-chat limits of an account row (migrations/0038); null when none was ever set. */
export function newChatLimitsOf(
  a: Pick<Account, 'new_chats_refused_at' | 'reachout_lock_until' | 'reachout_lock_type' | 'new_chat_cap'>,
): NewChatLimits | null {
  if (!a.new_chats_refused_at && !a.reachout_lock_until && !a.new_chat_cap) return null;
  const cap = a.new_chat_cap;
  return {
    refusedAt: a.new_chats_refused_at,
    reachoutLock: a.reachout_lock_until ? { until: a.reachout_lock_until, type: a.reachout_lock_type ?? 'DEFAULT' } : null,
    cap: cap && { status: cap.status, total: cap.total, used: cap.used, cycleEndsAt: dateOrNull(cap.cycleEndsAt), toldAt: new Date(cap.toldAt) },
  };
}
