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
  /** the latest scheduledAt of its scheduled runs (the previous occurrence), if any */
  lastScheduledAt: Date | null;
}

/** A decision for one due campaign, applied in one tick's transaction. */
export interface CampaignAdvance {
  id: string;
  nextRunAt: Date | null;
  /** false when a once-campaign has run: it becomes inactive */
  active: boolean;
}

/** A due campaign held back because its account cannot send (CONTRACT §4 `no-account`). */
export interface HeldCampaign {
  id: string;
  accountId: string;
  accountStatus: string;
  blockedUntil: Date | null;
  timezone: string;
  schedule: Schedule;
  nextRunAt: Date;
  /** consecutive no-account occurrences recorded so far */
  streak: number;
}

/** A new no-account streak for a campaign; `pauseReason` set when it pauses the campaign. */
export interface HeldUpdate {
  id: string;
  streak: number;
  pauseReason: string | null;
}

/** A run paused by its window closing, of an autoResume campaign with no other open run. */
export interface WindowPausedRun {
  id: string;
  campaignId: string;
  jobSeq: number;
  timezone: string;
  windowStart: string;
  windowEnd: string;
}

/** An automatic resume: the run goes to job step `nextSeq` with a recomputed window end. */
export interface AutoResume {
  id: string;
  expectedSeq: number;
  nextSeq: number;
  jobId: string;
  windowEndAt: Date | null;
}

/** A run that should have a live job: what the reconciler checks. */
export interface OpenRun {
  id: string;
  jobId: string | null;
  jobSeq: number;
  scheduledAt: Date;
}

/** A run whose job is missing from Redis, handed to job step `nextSeq`. */
export interface LostJob {
  runId: string;
  currentJobId: string | null;
  nextSeq: number;
  nextJobId: string;
}

/** A campaign the scheduler cannot turn into a run: deactivated with `reason` (CONTRACT §4 `failed`). */
export interface Isolation {
  id: string;
  reason: string;
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

  /**
   * Gives each run whose job was lost a new job id (its next job step), only where the run's
   * job id is still the one the caller found missing: a job that reappears under the old id then
   * does nothing. One statement for the whole page; returns the ids handed over.
   */
  async handOverLostJobs(lost: LostJob[], now: Date): Promise<string[]> {
    if (lost.length === 0) return [];
    const result = await sql<{ id: string }>`
      update runs r
      set job_seq = v.next_seq, job_id = v.next_job_id, updated_at = ${now}
      from unnest(
        ${sql.val(lost.map((l) => l.runId))}::uuid[],
        ${sql.val(lost.map((l) => l.currentJobId))}::text[],
        ${sql.val(lost.map((l) => l.nextSeq))}::int[],
        ${sql.val(lost.map((l) => l.nextJobId))}::text[]
      ) as v(id, current_job_id, next_seq, next_job_id)
      where r.id = v.id and r.status in ('queued', 'running') and r.job_id is not distinct from v.current_job_id
      returning r.id
    `.execute(this.db);
    return result.rows.map((r) => r.id);
  }

  /**
   * One page of the runs open in PostgreSQL (queued or running), by id after `afterId`: each must
   * have a live job in Redis.
   */
  async openRuns(afterId: string | null, limit: number): Promise<OpenRun[]> {
    let query = this.db.selectFrom('runs').select(['id', 'job_id', 'job_seq', 'scheduled_at']).where('status', 'in', ['queued', 'running']);
    if (afterId !== null) query = query.where('id', '>', afterId);
    const rows = await query.orderBy('id').limit(limit).execute();
    return rows.map((r) => ({ id: r.id, jobId: r.job_id, jobSeq: r.job_seq, scheduledAt: r.scheduled_at }));
  }

  /**
   * Targets whose in-flight lease expired (the sender died or stalled): one whose request had
   * begun (`send_started_at`) becomes `unknown`, since the platform may have acted on it, and is
   * never retried automatically; one still waiting for its slot, content or stamp never reached
   * the platform and goes back to `pending`, due at once, no attempt counted. Returns how many
   * became unknown.
   */
  async expireLeases(now: Date): Promise<number> {
    const result = await sql<{ unknown: number }>`
      with expired as (
        update run_targets set
          status = case when send_started_at is null then 'pending' else 'unknown' end,
          next_attempt_at = case when send_started_at is null then ${now} else next_attempt_at end,
          error_code = case when send_started_at is null then error_code else 'lease_expired' end,
          error_message = case when send_started_at is null then error_message
            else 'the sender stopped after writing this request and before recording its answer; it may or may not have been delivered' end,
          -- an unknown target keeps the moment its request began: the record of why it is unknown
          lease_owner = null, lease_expires_at = null, updated_at = ${now}
        where status = 'in_flight' and lease_expires_at < ${now}
        returning status
      )
      select count(*) filter (where status = 'unknown')::int as unknown from expired
    `.execute(this.db);
    return result.rows[0]?.unknown ?? 0;
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
        // the unique (campaign_id, scheduled_at) index answers this backwards in a few rows
        sql<Date | null>`(select max(p.scheduled_at) from runs p where p.campaign_id = c.id and p.trigger = 'schedule')`.as('last_scheduled_at'),
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
      lastScheduledAt: r.last_scheduled_at,
    }));
  }

  createRuns(runs: NewRun[]): Promise<string[]> {
    return insertRuns(this.trx, runs);
  }

  /** Moves every decided campaign to its next occurrence in one statement (its no-account streak ends). */
  async advance(advances: CampaignAdvance[], now: Date): Promise<void> {
    if (advances.length === 0) return;
    await sql`
      update campaigns c
      set next_run_at = v.next_run_at, active = v.active, no_account_streak = 0, updated_at = c.updated_at
      from unnest(
        ${sql.val(advances.map((a) => a.id))}::uuid[],
        ${sql.val(advances.map((a) => a.nextRunAt?.toISOString() ?? null))}::timestamptz[],
        ${sql.val(advances.map((a) => a.active))}::boolean[]
      ) as v(id, next_run_at, active)
      where c.id = v.id
    `.execute(this.trx);
    void now;
  }

  /**
   * Due campaigns whose account cannot send (not active, or blocked until later), oldest due
   * first, locked like dueCampaigns: what the tick counts as `no-account` and re-checks.
   */
  async dueWithoutAccount(now: Date, limit: number): Promise<HeldCampaign[]> {
    const rows = await this.trx
      .selectFrom('campaigns as c')
      .innerJoin('accounts as a', 'a.id', 'c.account_id')
      .select(['c.id', 'c.account_id', 'a.status', 'a.blocked_until', 'c.timezone', 'c.schedule', 'c.next_run_at', 'c.no_account_streak'])
      .where('c.active', '=', true)
      .where('c.deleted_at', 'is', null)
      .where('c.next_run_at', '<=', now)
      .where((eb) => eb.or([eb('a.status', '<>', 'active'), eb('a.blocked_until', '>', now)]))
      .orderBy('c.next_run_at')
      .limit(limit)
      .forUpdate('c')
      .skipLocked()
      .execute();
    return rows.map((r) => ({
      id: r.id,
      accountId: r.account_id,
      accountStatus: r.status,
      blockedUntil: r.blocked_until,
      timezone: r.timezone,
      schedule: r.schedule,
      nextRunAt: r.next_run_at!,
      streak: r.no_account_streak,
    }));
  }

  /**
   * Records new no-account streaks in one statement; a campaign with a pause reason is
   * deactivated with it (the API shows it; re-activating clears it).
   */
  async recordHeld(updates: HeldUpdate[], now: Date): Promise<void> {
    if (updates.length === 0) return;
    await sql`
      update campaigns c
      set no_account_streak = v.streak,
        active = c.active and v.reason is null,
        next_run_at = case when v.reason is null then c.next_run_at end,
        paused_reason = coalesce(v.reason, c.paused_reason),
        updated_at = case when v.reason is null then c.updated_at else ${now} end
      from unnest(
        ${sql.val(updates.map((u) => u.id))}::uuid[],
        ${sql.val(updates.map((u) => u.streak))}::int[],
        ${sql.val(updates.map((u) => u.pauseReason))}::text[]
      ) as v(id, streak, reason)
      where c.id = v.id
    `.execute(this.trx);
  }

  /**
   * Deactivates each campaign the tick could not turn into a run, with the reason in
   * `last_error`, in one statement: the next ticks no longer select it, so it fails once.
   * Returns the ids deactivated.
   */
  async isolate(isolations: Isolation[], now: Date): Promise<string[]> {
    if (isolations.length === 0) return [];
    const result = await sql<{ id: string }>`
      update campaigns c
      set active = false, next_run_at = null, last_error = v.reason, updated_at = ${now}
      from unnest(
        ${sql.val(isolations.map((i) => i.id))}::uuid[],
        ${sql.val(isolations.map((i) => i.reason))}::text[]
      ) as v(id, reason)
      where c.id = v.id
      returning c.id
    `.execute(this.trx);
    return result.rows.map((r) => r.id);
  }

  /**
   * Runs `work` under a savepoint: a statement that fails inside it is rolled back alone and
   * its error returned, and the transaction goes on. Used only once a batched statement has
   * failed, to find the rows that make it fail; the usual tick never pays for it.
   */
  async guarded<T>(work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
    await sql`savepoint tick_guard`.execute(this.trx);
    try {
      const value = await work();
      await sql`release savepoint tick_guard`.execute(this.trx);
      return { ok: true, value };
    } catch (error) {
      await sql`rollback to savepoint tick_guard`.execute(this.trx);
      await sql`release savepoint tick_guard`.execute(this.trx);
      return { ok: false, error };
    }
  }

  /**
   * Runs paused because their window closed, of active autoResume campaigns that have no
   * queued or running run, earliest window end first (those reopen first), locked.
   */
  async windowPausedRuns(limit: number): Promise<WindowPausedRun[]> {
    const result = await sql<{ id: string; campaign_id: string; job_seq: number; timezone: string; window_start: string; window_end: string }>`
      select r.id, r.campaign_id, r.job_seq, c.timezone, c.window_start, c.window_end
      from runs r join campaigns c on c.id = r.campaign_id
      where r.status = 'paused' and r.paused_reason = 'window_closed'
        and c.auto_resume and c.active and c.deleted_at is null
        and not exists (select 1 from runs o where o.campaign_id = r.campaign_id and o.status in ('queued', 'running'))
      order by r.window_end_at nulls first, r.id
      limit ${limit}
      for update of r skip locked
    `.execute(this.trx);
    return result.rows.map((r) => ({
      id: r.id,
      campaignId: r.campaign_id,
      jobSeq: r.job_seq,
      timezone: r.timezone,
      windowStart: r.window_start,
      windowEnd: r.window_end,
    }));
  }

  /**
   * paused → queued for every resume in one statement: the operator's resume (CONTRACT §3),
   * made by the scheduler. Returns the ids actually resumed.
   */
  async autoResume(resumes: AutoResume[], now: Date): Promise<string[]> {
    if (resumes.length === 0) return [];
    const result = await sql<{ id: string }>`
      update runs r
      set status = 'queued', paused_reason = null, error_summary = null, window_end_at = v.window_end_at,
        job_seq = v.next_seq, job_id = v.job_id, updated_at = ${now}
      from unnest(
        ${sql.val(resumes.map((a) => a.id))}::uuid[],
        ${sql.val(resumes.map((a) => a.expectedSeq))}::int[],
        ${sql.val(resumes.map((a) => a.nextSeq))}::int[],
        ${sql.val(resumes.map((a) => a.jobId))}::text[],
        ${sql.val(resumes.map((a) => a.windowEndAt?.toISOString() ?? null))}::timestamptz[]
      ) as v(id, expected_seq, next_seq, job_id, window_end_at)
      where r.id = v.id and r.status = 'paused' and r.job_seq = v.expected_seq
      returning r.id
    `.execute(this.trx);
    return result.rows.map((r) => r.id);
  }
}
