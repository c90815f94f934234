import { sql, type RawBuilder } from 'kysely';
import type { RunProgress } from './send-shapes.js';

/** A run's target counts as progressStatement reads them (closeStatement's rows too). */
export interface ProgressRow {
  total: number;
  pending: number;
  in_flight: number;
  sent: number;
  failed: number;
  skipped: number;
  unknown: number;
  next_due_at: Date | null;
  any_attempt: boolean | null;
}

/**
 * A run's target counts in one statement. `settle`, an update returning the chat_ids it wrote `sent`,
 * runs first and its targets count as sent; `also` rides on the statement. With `unlessPending`, a run
 * with a pending target is not counted, only when its next comes due is read (counting reads every target).
 */
export function progressStatement(
  runId: string,
  settle: RawBuilder<{ chat_id: string }> | null,
  also: RawBuilder<unknown> | null = null,
  unlessPending = false,
): RawBuilder<ProgressRow & { settled: string[] | null; still_pending_due_at: Date | null }> {
  const done = settle ? sql`t.chat_id in (select chat_id from settled)` : sql`false`;
  const ctes = [
    ...(settle ? [sql`settled as (${settle})`] : []),
    ...(also ? [sql`also as (${also})`] : []),
    ...(unlessPending
      ? [
          sql`next_pending as (select p.next_attempt_at from run_targets p where p.run_id = ${runId} and p.status = 'pending' order by p.next_attempt_at limit 1)`,
        ]
      : []),
  ];
  return sql<ProgressRow & { settled: string[] | null; still_pending_due_at: Date | null }>`
    ${ctes.length > 0 ? sql`with ${sql.join(ctes)}` : sql``}
    select ${progressColumns(done)},
      ${settle ? sql`(select array_agg(chat_id) from settled)` : sql`null::text[]`} as settled,
      ${unlessPending ? sql`(select next_attempt_at from next_pending)` : sql`null::timestamptz`} as still_pending_due_at
    from run_targets t where t.run_id = ${runId}${unlessPending ? sql` and not exists (select 1 from next_pending)` : sql``}`;
}

/** A run's counts over `run_targets t`, the targets `done` matches counted as sent. */
export function progressColumns(done: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`count(*)::int as total,
      count(*) filter (where t.status = 'pending')::int as pending,
      count(*) filter (where t.status = 'in_flight' and not ${done})::int as in_flight,
      count(*) filter (where t.status = 'sent' or ${done})::int as sent,
      count(*) filter (where t.status = 'failed')::int as failed,
      count(*) filter (where t.status = 'skipped')::int as skipped,
      count(*) filter (where t.status = 'unknown')::int as unknown,
      min(t.next_attempt_at) filter (where t.status = 'pending') as next_due_at,
      bool_or(t.attempts > 0 or t.parts_sent > 0 or t.status <> 'pending') as any_attempt`;
}

export function toProgress(r: ProgressRow): RunProgress {
  return {
    total: r.total,
    pending: r.pending,
    inFlight: r.in_flight,
    sent: r.sent,
    failed: r.failed,
    skipped: r.skipped,
    unknown: r.unknown,
    nextDueAt: r.next_due_at,
    anyAttempt: r.any_attempt ?? false,
  };
}
