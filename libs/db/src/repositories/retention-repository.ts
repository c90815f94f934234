import { FINISHED_RUN_STATUSES } from '@metronome/core';
import { sql, type Kysely } from 'kysely';
import { countRuns } from './run-counts.js';
import { RunRepository } from './run-repository.js';
import type { DB } from '../types.js';
import { statusList } from './status-sql.js';

export interface RetentionPolicy {
  /** HISTORY_RETENTION; a tenant's `history_retention_ms` may shorten it */
  historyMs: number;
  summaryMs: number;
}

/** The retention sweep's statements (docs/DESIGN.md): each delete takes at most `batch` rows by an index, in its own transaction. */
export class RetentionRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Finished runs whose targets and events are due to go, oldest first. */
  async dueHistory(now: Date, policy: RetentionPolicy, limit: number): Promise<string[]> {
    const rows = await sql<{ id: string }>`
      select r.id from runs r join tenants t on t.id = r.tenant_id
       where r.finished_at is not null and r.history_purged_at is null
         and r.status in (${statusList(FINISHED_RUN_STATUSES)})
         and r.finished_at < ${earliestCutoff(now, policy)}
         and r.finished_at < ${now}::timestamptz - make_interval(secs => coalesce(least(t.history_retention_ms, ${policy.historyMs}), ${policy.historyMs}) / 1000.0)
       order by r.finished_at limit ${limit}`.execute(this.db);
    return rows.rows.map((r) => r.id);
  }

  /** Keeps the runs' counts (run-counts.ts) before their targets go. */
  async keepSummaries(runIds: string[]): Promise<void> {
    await new RunRepository(this.db).keepSummaries(await countRuns(this.db, runIds));
  }

  async deleteTargets(runIds: string[], batch: number): Promise<number> {
    const result = await sql`
      delete from run_targets where ctid = any(array(
        select t.ctid from unnest(${runIds}::uuid[]) ids(id) join run_targets t on t.run_id = ids.id limit ${batch}))`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }

  async deleteEvents(runIds: string[], batch: number): Promise<number> {
    const result = await sql`
      delete from run_events where id = any(array(
        select e.id from unnest(${runIds}::uuid[]) ids(id) join run_events e on e.run_id = ids.id limit ${batch}))`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }

  async markPurged(runIds: string[], now: Date): Promise<void> {
    await new RunRepository(this.db).markPurged(runIds, now);
  }

  async deleteSummaries(now: Date, policy: RetentionPolicy, batch: number): Promise<number> {
    return new RunRepository(this.db).deleteSummaries(sql`${now}::timestamptz - make_interval(secs => ${policy.summaryMs} / 1000.0)`, batch);
  }

  /** Deletes up to `batch` settled webhook deliveries older than their tenant's retention. */
  async deleteSettledDeliveries(now: Date, policy: RetentionPolicy, batch: number): Promise<number> {
    const result = await sql`
      delete from webhook_deliveries where id = any(array(
        select d.id from webhook_deliveries d join tenants t on t.id = d.tenant_id
         where d.status in ('delivered', 'failed') and d.created_at < ${earliestCutoff(now, policy)}
           and d.created_at < ${now}::timestamptz - make_interval(secs => coalesce(least(t.history_retention_ms, ${policy.historyMs}), ${policy.historyMs}) / 1000.0)
         order by d.created_at limit ${batch}))`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }

  /** Deletes up to `batch` media past retention that no campaign or live run names, with their upload refs. */
  async deleteUnusedMedia(now: Date, policy: RetentionPolicy, batch: number): Promise<number> {
    const result = await sql<{ n: number }>`
      with m as (
        select m.id from media m join tenants t on t.id = m.tenant_id
         where m.created_at < ${earliestCutoff(now, policy)}
           and m.created_at < ${now}::timestamptz - make_interval(secs => coalesce(least(t.history_retention_ms, ${policy.historyMs}), ${policy.historyMs}) / 1000.0)
           and not exists (select 1 from campaigns c where c.tenant_id = m.tenant_id and c.deleted_at is null
                             and c.messages @> jsonb_build_array(jsonb_build_object('mediaId', m.id::text)))
           and not exists (select 1 from runs r where r.tenant_id = m.tenant_id and r.status in ('queued', 'running', 'paused')
                             and r.parts @> jsonb_build_array(jsonb_build_object('mediaId', m.id::text)))
         order by m.created_at limit ${batch}
         for update of m skip locked
      ), refs as (
        delete from media_uploads u using m where u.media_id = m.id
      ), gone as (
        delete from media d using m where d.id = m.id returning 1
      )
      select count(*)::int as n from gone`.execute(this.db);
    return result.rows[0]?.n ?? 0;
  }
}

/** The shortest retention's cutoff, one value the planner knows before the scan, so the index is read only up to it. */
function earliestCutoff(now: Date, policy: RetentionPolicy) {
  return sql`(${now}::timestamptz - make_interval(secs => (select least(${policy.historyMs}, coalesce(min(history_retention_ms), ${policy.historyMs})) from tenants) / 1000.0))`;
}
