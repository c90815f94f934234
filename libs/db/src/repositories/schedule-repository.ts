import { OPEN_RUN_STATUSES } from '@metronome/core';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../types.js';
import { AccountCoolingRepository, type CoolingEnded } from './account-cooling.js';
import { RunRepository, type HandedOver, type LostJob } from './run-repository.js';
import { TickTransaction } from './tick-transaction.js';

export {
  TickTransaction,
  type DueCampaign,
  type CampaignAdvance,
  type HeldCampaign,
  type HeldUpdate,
  type WindowPausedRun,
  type AutoResume,
  type ResumedRun,
  type Isolation,
} from './tick-transaction.js';

/** A run that should have a live job: what the reconciler checks. */
export interface OpenRun {
  id: string;
  jobId: string | null;
  jobSeq: number;
  scheduledAt: Date;
}

export class StaleFenceError extends Error {
  readonly code = 'stale_fence';
  constructor() {
    super('this scheduler is no longer the leader (fencing token superseded)');
  }
}

export class ScheduleRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** A new leader takes the next fencing token; runs created with an older one are refused. */
  async takeFence(holder: string, now: Date): Promise<number> {
    const row = await this.db
      .updateTable('scheduler_leader')
      .set({ fence: sql`fence + 1`, holder, acquired_at: now })
      .where('id', '=', 1)
      .returning('fence')
      .executeTakeFirstOrThrow();
    return Number(row.fence);
  }

  /** Runs `work` in one transaction that first checks `fence` is current, share-locked so a new leader waits. */
  async tick<T>(fence: number, work: (tx: TickTransaction) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('scheduler_leader').select('fence').where('id', '=', 1).forShare().executeTakeFirst();
      if (!row || Number(row.fence) !== fence) throw new StaleFenceError();
      return work(new TickTransaction(trx));
    });
  }

  async handOverLostJobs(lost: LostJob[], now: Date): Promise<HandedOver[]> {
    return new RunRepository(this.db).handOverLost(lost, now);
  }

  /** A page of open runs by id after `afterId`: each must have a live job in Redis. */
  async openRuns(afterId: string | null, limit: number): Promise<OpenRun[]> {
    let query = this.db.selectFrom('runs').select(['id', 'job_id', 'job_seq', 'scheduled_at']).where('status', 'in', OPEN_RUN_STATUSES);
    if (afterId !== null) query = query.where('id', '>', afterId);
    const rows = await query.orderBy('id').limit(limit).execute();
    return rows.map((r) => ({ id: r.id, jobId: r.job_id, jobSeq: r.job_seq, scheduledAt: r.scheduled_at }));
  }

  /**
   * Targets whose lease expired: one whose request had begun becomes `unknown` (never retried), or
   * `pending` again on a deduplicating platform (migrations/0020); one not begun goes back to `pending`,
   * due at once. How many became unknown.
   */
  async expireLeases(now: Date): Promise<number> {
    const result = await sql<{ unknown: number }>`
      with expired as (
        update run_targets t set
          status = case when t.send_started_at is null or a.platform_deduplicates then 'pending' else 'unknown' end,
          next_attempt_at = case when t.send_started_at is null or a.platform_deduplicates then ${now} else t.next_attempt_at end,
          error_code = case when t.send_started_at is null then t.error_code else 'lease_expired' end,
          error_message = case when t.send_started_at is null then t.error_message
            when a.platform_deduplicates then 'the sender stopped after writing this request and before recording its answer; sent again with the same key, which the platform answers without delivering twice'
            else 'the sender stopped after writing this request and before recording its answer; it may or may not have been delivered' end,
          ambiguous_at = case when t.send_started_at is not null and a.platform_deduplicates then coalesce(t.ambiguous_at, ${now}) else t.ambiguous_at end,
          -- an unknown target keeps the moment its request began: the record of why it is unknown
          lease_owner = null, lease_expires_at = null, updated_at = ${now}
        from runs r join accounts a on a.id = r.account_id
        where t.status = 'in_flight' and t.lease_expires_at < ${now} and r.id = t.run_id
        returning t.status
      )
      select count(*) filter (where status = 'unknown')::int as unknown from expired
    `.execute(this.db);
    return result.rows[0]?.unknown ?? 0;
  }

  async endDueCoolings(now: Date): Promise<CoolingEnded[]> {
    return new AccountCoolingRepository(this.db).endDue(now);
  }

  async expirePausedRuns(now: Date, ttlMs: number): Promise<number> {
    return new RunRepository(this.db).expirePaused(now, ttlMs);
  }
}
