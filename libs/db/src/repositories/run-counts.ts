import { sql, type Kysely } from 'kysely';
import type { DB, RunCounts } from '../types.js';

export function emptyCounts(total: number): RunCounts {
  return { total, pending: 0, inFlight: 0, sent: 0, failed: 0, skipped: 0, unknown: 0, delivered: 0, read: 0, replied: 0 };
}

/**
 * Per-status target counts of many runs, derived from run_targets (never stored twice); a run whose
 * targets retention removed reads the counts kept for it.
 */
export async function countRuns(db: Kysely<DB>, runIds: string[]): Promise<Map<string, RunCounts>> {
  const out = new Map<string, RunCounts>();
  if (runIds.length === 0) return out;
  const rows = await db
    .selectFrom('run_targets')
    .select([
      'run_id',
      'status',
      sql<number>`count(*)::int`.as('n'),
      sql<number>`count(delivered_at)::int`.as('delivered'),
      sql<number>`count(read_at)::int`.as('read'),
      sql<number>`count(replied_at)::int`.as('replied'),
    ])
    .where('run_id', '=', sql<string>`any(${sql.val(runIds)}::uuid[])`)
    .groupBy(['run_id', 'status'])
    .execute();
  for (const row of rows) {
    const c = out.get(row.run_id) ?? emptyCounts(0);
    c.total += row.n;
    c.delivered += row.delivered;
    c.read += row.read;
    c.replied += row.replied;
    if (row.status === 'in_flight') c.inFlight += row.n;
    else c[row.status] += row.n;
    out.set(row.run_id, c);
  }
  const missing = runIds.filter((id) => !out.has(id));
  const kept =
    missing.length === 0
      ? []
      : await db
          .selectFrom('runs')
          .select(['id', 'summary_counts'])
          .where('id', '=', sql<string>`any(${sql.val(missing)}::uuid[])`)
          .where('summary_counts', 'is not', null)
          .execute();
  for (const row of kept) out.set(row.id, { ...emptyCounts(0), ...row.summary_counts });
  for (const id of missing) if (!out.has(id)) out.set(id, emptyCounts(0));
  return out;
}
