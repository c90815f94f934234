import { HOLD_CLASSES, LIVE_RUN_STATUSES, OPEN_RUN_STATUSES, type NewChatLimits, type RunCountsLike, type TargetHold } from '@metronome/core';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { StoredNewChatCap } from '../schema/accounts.js';
import type { DB } from '../types.js';
import { newChatLimitsOf } from './account-rows.js';
import { statusList } from './status-sql.js';

/** Pending targets held by one kind of hold on a run: how many, the first and the last to be free. */
export interface HoldRow {
  count: number;
  first: Date;
  last: Date;
}

/** What the explanation of one run (libs/core explainRun, runEta) reads from PostgreSQL. */
export interface RunWaitingRow extends Pick<RunCountsLike, 'total' | 'skipped' | 'pending' | 'inFlight'> {
  runId: string;
  status: string;
  pausedReason: string | null;
  scheduledAt: Date;
  firstSendAt: Date | null;
  windowEndAt: Date | null;
  timezone: string;
  windowStart: string;
  windowEnd: string;
  autoResume: boolean;
  everySeconds: number | null;
  partsPerChat: number;
  account: {
    id: string;
    platform: string;
    status: string;
    blockedUntil: Date | null;
    maxSendPerMinute: number | null;
    /** automatic cooling (migrations/0012): the end and reason while `cooling`, and the pace factor */
    coolingUntil: Date | null;
    coolingReason: string | null;
    /** which restriction, while restricted (migrations/0041) */
    restrictedBecause: string | null;
    paceFactor: number;
    paceSince: Date | null;
    /** why its proxy failed last (migrations/0035); null: it did not */
    proxyFailure: string | null;
    /** what WhatsApp lets it do with new chats (migrations/0038); null: nothing told */
    newChats: NewChatLimits | null;
  };
  due: number;
  /** the earliest due time of the pending targets due now */
  dueSince: Date | null;
  holds: Partial<Record<TargetHold, HoldRow>>;
  /**
   * another queued or running run of the same account is sending, or touched its targets after
   * this run last did: with the account's lock held, that run holds the account
   */
  otherRunActive: boolean;
}

interface Raw {
  id: string;
  status: string;
  paused_reason: string | null;
  scheduled_at: Date;
  first_send_at: Date | null;
  total: number;
  window_end_at: Date | null;
  timezone: string;
  window_start: string;
  window_end: string;
  auto_resume: boolean;
  every_seconds: number | null;
  parts: number;
  account_id: string;
  platform: string;
  account_status: string;
  blocked_until: Date | null;
  max_send_per_minute: number | null;
  cooling_until: Date | null;
  cooling_reason: string | null;
  restricted_because: string | null;
  pace_factor: number;
  pace_since: Date | null;
  proxy_failure: string | null;
  new_chats_refused_at: Date | null;
  reachout_lock_until: Date | null;
  reachout_lock_type: string | null;
  new_chat_cap: StoredNewChatCap | null;
  skipped: number | null;
  pending: number | null;
  in_flight: number | null;
  due: number | null;
  due_since: Date | null;
  other_active: boolean | null;
  [hold: string]: unknown;
}

/** A coded hold (libs/core HOLD_CLASSES): a target with one of `codes` is held by `kind`. */
type HoldClass = (typeof HOLD_CLASSES)[number];

/**
 * Reads for `waiting` and `eta` (CONTRACT §3): one statement for any number of runs, so a page
 * of runs costs one query whatever its size.
 */
export class RunWaitingRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * The facts of each run in `runIds`. Targets are aggregated for open and paused runs only (a
   * finished run waits for nothing). A pending target whose next attempt lies after `now` is
   * held, and counted under the kind libs/core `targetHold` gives it: a limit's code
   * (`holdClasses`) → that limit; else attempts counted → retry_backoff; else a code →
   * flood_wait; else interval_gate.
   */
  async factsOfRuns(runIds: string[], now: Date, holdClasses: readonly HoldClass[] = HOLD_CLASSES): Promise<Map<string, RunWaitingRow>> {
    const out = new Map<string, RunWaitingRow>();
    if (runIds.length === 0) return out;
    const result = await this.factsQuery(runIds, now, holdClasses).execute(this.db);
    for (const r of result.rows) out.set(r.id, toRow(r, holdClasses));
    return out;
  }

  /**
   * The one statement `factsOfRuns` runs; a test reads its plan to see that a finished run's
   * targets are not read. The run's status is tested inside the lateral subquery, where
   * PostgreSQL makes it a one-time filter that skips the scan: as the join's condition it was
   * tested after the aggregate, which had read every target of every finished run on the page.
   */
  factsQuery(runIds: string[], now: Date, holdClasses: readonly HoldClass[] = HOLD_CLASSES) {
    const held = sql`status = 'pending' and next_attempt_at > ${now}`;
    const coded = sql.val(holdClasses.flatMap((c) => c.codes));
    const other = sql`not coalesce(error_code = any(${coded}::text[]), false)`;
    const kinds = new Map<string, RawBuilder<unknown>>([
      ...holdClasses.map((c) => [c.kind, sql`${held} and error_code = any(${sql.val([...c.codes])}::text[])`] as const),
      ['retry_backoff', sql`${held} and ${other} and attempts > 0`],
      ['flood_wait', sql`${held} and ${other} and attempts = 0 and error_code is not null`],
      ['interval_gate', sql`${held} and attempts = 0 and error_code is null`],
    ]);
    const holdColumns = [...kinds].map(
      ([k, where]) => sql`count(*) filter (where ${where})::int as ${sql.ref(`${k}_n`)},
        min(next_attempt_at) filter (where ${where}) as ${sql.ref(`${k}_first`)},
        max(next_attempt_at) filter (where ${where}) as ${sql.ref(`${k}_last`)}`,
    );
    return sql<Raw>`
      select r.id, r.status, r.paused_reason, r.scheduled_at, r.first_send_at, r.total, r.window_end_at,
        c.timezone, c.window_start, c.window_end, c.auto_resume,
        case when c.schedule->>'type' = 'interval' then (c.schedule->>'everySeconds')::int end as every_seconds,
        jsonb_array_length(r.parts)::int as parts,
        a.id as account_id, a.platform, a.status as account_status, a.blocked_until, a.max_send_per_minute,
        a.cooling_until, a.cooling_reason, a.restricted_because, a.pace_factor, a.pace_since, a.proxy_failure,
        a.new_chats_refused_at, a.reachout_lock_until, a.reachout_lock_type, a.new_chat_cap,
        t.*,
        case when r.status in (${statusList(OPEN_RUN_STATUSES)}) then exists (
          select 1 from runs o join run_targets ot on ot.run_id = o.id
          where o.account_id = r.account_id and o.id <> r.id and o.status in (${statusList(OPEN_RUN_STATUSES)})
            and (ot.status = 'in_flight' or ((ot.status <> 'pending' or ot.attempts > 0) and ot.updated_at > coalesce(t.last_touch, '-infinity'::timestamptz)))
        ) end as other_active
      from runs r
      join campaigns c on c.id = r.campaign_id
      join accounts a on a.id = r.account_id
      left join lateral (
        select count(*) filter (where status = 'pending')::int as pending,
          count(*) filter (where status = 'skipped')::int as skipped,
          count(*) filter (where status = 'in_flight')::int as in_flight,
          count(*) filter (where status = 'pending' and next_attempt_at <= ${now})::int as due,
          min(next_attempt_at) filter (where status = 'pending' and next_attempt_at <= ${now}) as due_since,
          max(updated_at) filter (where status <> 'pending' or attempts > 0) as last_touch,
          ${sql.join(holdColumns, sql`, `)}
        from run_targets where run_id = r.id and r.status in (${statusList(LIVE_RUN_STATUSES)})
      ) t on true
      where r.id = any(${sql.val(runIds)}::uuid[])
    `;
  }
}

function toRow(r: Raw, holdClasses: readonly HoldClass[]): RunWaitingRow {
  const holds: Record<string, HoldRow> = {};
  for (const k of [...holdClasses.map((c) => c.kind), 'retry_backoff', 'flood_wait', 'interval_gate']) {
    const n = Number(r[`${k}_n`] ?? 0);
    if (n > 0) holds[k] = { count: n, first: r[`${k}_first`] as Date, last: r[`${k}_last`] as Date };
  }
  return {
    runId: r.id,
    status: r.status,
    pausedReason: r.paused_reason,
    scheduledAt: r.scheduled_at,
    firstSendAt: r.first_send_at,
    windowEndAt: r.window_end_at,
    timezone: r.timezone,
    windowStart: r.window_start,
    windowEnd: r.window_end,
    autoResume: r.auto_resume,
    everySeconds: r.every_seconds,
    partsPerChat: r.parts,
    account: {
      id: r.account_id,
      platform: r.platform,
      status: r.account_status,
      blockedUntil: r.blocked_until,
      maxSendPerMinute: r.max_send_per_minute,
      coolingUntil: r.cooling_until,
      coolingReason: r.cooling_reason,
      restrictedBecause: r.restricted_because,
      paceFactor: r.pace_factor,
      paceSince: r.pace_since,
      proxyFailure: r.proxy_failure,
      newChats: newChatLimitsOf(r),
    },
    total: r.total,
    skipped: r.skipped ?? 0,
    pending: r.pending ?? 0,
    inFlight: r.in_flight ?? 0,
    due: r.due ?? 0,
    dueSince: r.due_since,
    holds,
    otherRunActive: r.other_active === true,
  };
}
