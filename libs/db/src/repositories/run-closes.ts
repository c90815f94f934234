import type { StillPending } from '@metronome/core';
import { sql } from 'kysely';
import type { HealthWrite } from './account-cooling.js';
import { progressColumns, type ProgressRow } from './run-progress.js';
import { finishedWhenAllSent } from './run-repository.js';
import type { RunProgress } from './send-shapes.js';
import { settleSentStatement, type SentSettlement } from './settle-sent.js';

/** One job's last write: its run, lease owner, deliveries not yet written, and its account's health when changed. */
export interface CloseRequest {
  runId: string;
  owner: string;
  sent: SentSettlement[];
  health: { accountId: string; write: HealthWrite } | null;
}

/** What a job's last write did: deliveries written, the run's counts, whether it finished the run. */
export interface CloseResult {
  settled: Set<string>;
  progress: RunProgress | StillPending;
  finished: boolean;
}

interface CloseRow extends ProgressRow {
  run_id: string;
  still_pending_due_at: Date | null;
  settled: string[] | null;
  finished: boolean;
}

/**
 * The last write of several jobs in one statement: each job's deliveries `sent` (fenced by its lease),
 * its account's health, and its run's counts as progressStatement counts them (a run with a pending
 * target only says when the next comes due). With `finish`, a run whose every target is sent is finished
 * `success`, as libs/core decideJobEnd would. Results in the order of `requests`.
 */
export function closeStatement(requests: CloseRequest[], now: Date, finish: boolean) {
  const sent = requests.flatMap((r) => r.sent.map((s) => ({ ...s, runId: r.runId, owner: r.owner })));
  const healths = requests.flatMap((r) =>
    r.health
      ? [
          {
            id: r.health.accountId,
            flood_waits: r.health.write.floodWaits.map((d) => d.toISOString()),
            outcomes: r.health.write.outcomes,
            pace_factor: r.health.write.paceFactor,
            pace_since: r.health.write.paceSince?.toISOString() ?? null,
          },
        ]
      : [],
  );
  const done = sent.length > 0 ? sql`(t.run_id, t.chat_id, t.thread_id) in (select s.run_id, s.chat_id, s.thread_id from settled s)` : sql`false`;
  return sql<CloseRow>`
    with asked as materialized (
      select * from unnest(${requests.map((r) => r.runId)}::uuid[]) as a(run_id)
    ), ${sent.length > 0 ? sql`settled as (${settleSentStatement(sent, now)}),` : sql``}
    ${
      healths.length > 0
        ? sql`health as (
      update accounts x
        set flood_waits = h.flood_waits, send_outcomes = h.outcomes, pace_factor = h.pace_factor, pace_since = h.pace_since, updated_at = ${now}
      from jsonb_to_recordset(${JSON.stringify(healths)}::jsonb) as h(id uuid, flood_waits timestamptz[], outcomes text, pace_factor float8, pace_since timestamptz)
      where x.id = h.id
      returning 1
    ),`
        : sql``
    }
    next_pending as materialized (
      select a.run_id, (
        select p.next_attempt_at from run_targets p where p.run_id = a.run_id and p.status = 'pending' order by p.next_attempt_at limit 1
      ) as due_at
      from asked a
    ), counted as materialized (
      select np.run_id, np.due_at as still_pending_due_at, k.* from next_pending np
      cross join lateral (
        select ${progressColumns(done)}
        from run_targets t where t.run_id = np.run_id and np.due_at is null
      ) k
    )${finish ? sql`, ${finishedWhenAllSent(now)}` : sql``}
    select c.*,
      ${sent.length > 0 ? sql`(select array_agg(s.target_key) from settled s where s.run_id = c.run_id)` : sql`null::text[]`} as settled,
      ${finish ? sql`exists (select 1 from finished x where x.id = c.run_id)` : sql`false`} as finished
    from counted c`;
}

export function toCloseResult(row: CloseRow): CloseResult {
  const progress: RunProgress | StillPending =
    row.still_pending_due_at !== null
      ? { stillPending: true, nextDueAt: row.still_pending_due_at }
      : {
          total: row.total,
          pending: row.pending,
          inFlight: row.in_flight,
          sent: row.sent,
          failed: row.failed,
          skipped: row.skipped,
          unknown: row.unknown,
          nextDueAt: row.next_due_at,
          anyAttempt: row.any_attempt ?? false,
        };
  return { settled: new Set(row.settled ?? []), progress, finished: row.finished };
}
