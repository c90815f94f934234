import { sql, type RawBuilder } from 'kysely';

/**
 * A status set as SQL literals (`'queued', 'running'`) for `status in (…)`. Literals, not
 * parameters: the statement text stays what it was, and the planner can still match the
 * partial indexes whose predicates name these statuses (runs_one_open_per_campaign).
 */
export function statusList(statuses: readonly string[]): RawBuilder<unknown> {
  return sql.join(statuses.map((s) => sql.lit(s)));
}
