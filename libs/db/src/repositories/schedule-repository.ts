import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB, MessagePart, Schedule } from '../types.js';
import { insertRuns, type NewRun } from './run-creation.js';

/** A due campaign as the scheduler sees it. */
export interface DueCampaign {
  id: string;
  tenantId: string;
  accountId: string;
  name: string;
  timezone: string;
  schedule: Schedule;
  windowStart: string;
  windowEnd: string;
  messages: MessagePart[];
  nextRunAt: Date;
}

/** A decision for one due campaign, applied in one tick's transaction. */
export interface CampaignAdvance {
  id: string;
  nextRunAt: Date | null;
  /** false when a once-campaign has run: it becomes inactive */
  active: boolean;
}

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

/** The scheduler's queries. A tick is one transaction with a constant number of statements. */
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

  /**
   * Runs `work` in one transaction that first checks `fence` is still the current one (and
   * holds a share lock on it, so a new leader's takeFence waits for this tick to commit).
   */
  async tick<T>(fence: number, work: (tx: TickTransaction) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('scheduler_leader').select('fence').where('id', '=', 1).forShare().executeTakeFirst();
      if (!row || Number(row.fence) !== fence) throw new StaleFenceError();
      return work(new TickTransaction(trx));
    });
  }

  /** Runs open in PostgreSQL (queued or running) and not touched for `quietMs`: each must have a job in Redis. */
  async openRuns(now: Date, quietMs: number, limit: number): Promise<OpenRun[]> {
    const rows = await this.db
      .selectFrom('runs')
      .select(['id', 'job_id', 'job_seq', 'scheduled_at'])
      .where('status', 'in', ['queued', 'running'])
      .where('updated_at', '<', new Date(now.getTime() - quietMs))
      .orderBy('updated_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ id: r.id, jobId: r.job_id, jobSeq: r.job_seq, scheduledAt: r.scheduled_at }));
  }

  /**
   * Targets whose in-flight lease expired (the sender died or stalled mid-send) become
   * `unknown`: the send may have reached the platform, so it is never retried automatically.
   */
  async expireLeases(now: Date): Promise<number> {
    const result = await this.db
      .updateTable('run_targets')
      .set({
        status: 'unknown',
        error_code: 'lease_expired',
        error_message: 'the sender stopped while this send was in flight; it may or may not have been delivered',
        lease_owner: null,
        lease_expires_at: null,
        updated_at: now,
      })
      .where('status', '=', 'in_flight')
      .where('lease_expires_at', '<', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Paused runs older than the TTL are cancelled; their pending targets become skipped. */
  async expirePausedRuns(now: Date, ttlMs: number): Promise<number> {
    const cutoff = new Date(now.getTime() - ttlMs);
    return this.db.transaction().execute(async (trx) => {
      const expired = await trx
        .updateTable('runs')
        .set({ status: 'cancelled', finished_at: now, error_summary: 'Paused too long: cancelled after PAUSED_RUN_TTL.', updated_at: now })
        .where('status', '=', 'paused')
        .where('updated_at', '<', cutoff)
        .returning('id')
        .execute();
      if (expired.length === 0) return 0;
      await trx
        .updateTable('run_targets')
        .set({ status: 'skipped', error_code: 'expired', updated_at: now })
        .where('run_id', 'in', expired.map((r) => r.id))
        .where('status', '=', 'pending')
        .execute();
      return expired.length;
    });
  }

  /** Campaigns due but held back because their account cannot send (for the no-account count). */
  async countDueWithoutAccount(now: Date): Promise<number> {
    const row = await this.db
      .selectFrom('campaigns as c')
      .innerJoin('accounts as a', 'a.id', 'c.account_id')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('c.active', '=', true)
      .where('c.deleted_at', 'is', null)
      .where('c.next_run_at', '<=', now)
      .where((eb) => eb.or([eb('a.status', '<>', 'active'), eb('a.blocked_until', '>', now)]))
      .executeTakeFirstOrThrow();
    return row.n;
  }
}

/** The statements of one tick, inside its transaction. */
export class TickTransaction {
  constructor(private readonly trx: Transaction<DB>) {}

  /**
   * Due, actionable campaigns, oldest due first: active, with an active and unblocked account,
   * and no run of theirs queued or running (a due occurrence waits for it). Rows are locked;
   * another scheduler's tick skips them.
   */
  async dueCampaigns(now: Date, limit: number): Promise<DueCampaign[]> {
    const rows = await this.trx
      .selectFrom('campaigns as c')
      .innerJoin('accounts as a', 'a.id', 'c.account_id')
      .select([
        'c.id',
        'c.tenant_id',
        'c.account_id',
        'c.name',
        'c.timezone',
        'c.schedule',
        'c.window_start',
        'c.window_end',
        'c.messages',
        'c.next_run_at',
      ])
      .where('c.active', '=', true)
      .where('c.deleted_at', 'is', null)
      .where('c.next_run_at', '<=', now)
      .where('a.status', '=', 'active')
      .where((eb) => eb.or([eb('a.blocked_until', 'is', null), eb('a.blocked_until', '<=', now)]))
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('runs as r').select('r.id').whereRef('r.campaign_id', '=', 'c.id').where('r.status', 'in', ['queued', 'running']))),
      )
      .orderBy('c.next_run_at')
      .limit(limit)
      .forUpdate('c')
      .skipLocked()
      .execute();
    return rows.map((r) => ({
      id: r.id,
      tenantId: r.tenant_id,
      accountId: r.account_id,
      name: r.name,
      timezone: r.timezone,
      schedule: r.schedule,
      windowStart: r.window_start,
      windowEnd: r.window_end,
      messages: r.messages,
      nextRunAt: r.next_run_at!,
    }));
  }

  createRuns(runs: NewRun[]): Promise<string[]> {
    return insertRuns(this.trx, runs);
  }

  /** Moves every decided campaign to its next occurrence in one statement. */
  async advance(advances: CampaignAdvance[], now: Date): Promise<void> {
    if (advances.length === 0) return;
    await sql`
      update campaigns c
      set next_run_at = v.next_run_at, active = v.active, updated_at = c.updated_at
      from unnest(
        ${sql.val(advances.map((a) => a.id))}::uuid[],
        ${sql.val(advances.map((a) => a.nextRunAt?.toISOString() ?? null))}::timestamptz[],
        ${sql.val(advances.map((a) => a.active))}::boolean[]
      ) as v(id, next_run_at, active)
      where c.id = v.id
    `.execute(this.trx);
    void now;
  }
}
