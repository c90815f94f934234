import { sql, type RawBuilder } from 'kysely';

/** A status set as SQL literals for `status in (…)`, so the planner can match partial indexes naming these statuses. */
export function statusList(statuses: readonly string[]): RawBuilder<unknown> {
  return sql.join(statuses.map((s) => sql.lit(s)));
}
