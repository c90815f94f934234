import { OPEN_RUN_STATUSES } from '@metronome/core';
import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { CatchUpPolicy, DB, MessagePart, Schedule } from '../types.js';
import { accountCanSend } from './account-sql.js';
import { runInserts, type NewRun } from './run-creation.js';
import { statusList } from './status-sql.js';
import { resumeRun } from './run-status.js';

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
  catchUpPolicy: CatchUpPolicy;
  /** null: the default lateness (libs/core latenessLimitMs) */
  catchUpMaxLatenessSeconds: number | null;
  /** the end of a backlog an `all` catch-up accepted and still runs */
  catchUpThrough: Date | null;
}

/** A decision for one due campaign, applied in one tick's transaction. */
export interface CampaignAdvance {
  id: string;
  nextRunAt: Date | null;
  /** false when a once-campaign has run: it becomes inactive */
  active: boolean;
  /** occurrences passed over without a run, added to the campaign's skipped_count */
  skipped: number;
  /** the latest of them; null keeps the campaign's last_skipped_at */
  lastSkippedAt: Date | null;
  /** the campaign's catch_up_through afterwards */
  catchUpThrough: Date | null;
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

/** An automatic resume: the run, still at job step `expectedSeq`, goes to the next step with a recomputed window end. */
export interface AutoResume {
  id: string;
  expectedSeq: number;
  windowEndAt: Date | null;
}

/** A run autoResume queued again, at the job step it moved to. */
export interface ResumedRun {
  id: string;
  jobSeq: number;
}

/** A campaign the scheduler cannot turn into a run: deactivated with `reason` (CONTRACT §4 `failed`). */
export interface Isolation {
  id: string;
  reason: string;
}

/** The statements of one tick, inside its transaction. */
export class TickTransaction {
  constructor(private readonly trx: Transaction<DB>) {}

  /**
   * The campaigns due at `now` (active, not deleted) joined with their account, oldest due
   * first, at most `limit`, locked: another scheduler's tick skips them. The tick's queries add
   * their columns and which accounts they want.
   */
  private due(now: Date, limit: number) {
    return this.trx
      .selectFrom('campaigns as c')
      .innerJoin('accounts as a', 'a.id', 'c.account_id')
      .where('c.active', '=', true)
      .where('c.deleted_at', 'is', null)
      .where('c.next_run_at', '<=', now)
      .orderBy('c.next_run_at')
      .limit(limit)
      .forUpdate('c')
      .skipLocked();
  }

  /**
   * Due, actionable campaigns, oldest due first: active, with an active and unblocked account,
   * and no run of theirs queued or running (a due occurrence waits for it). Rows are locked;
   * another scheduler's tick skips them. `onlyId`: that campaign alone (the API's instant start,
   * in the transaction that saved it, sees it exactly as a tick would).
   */
  async dueCampaigns(now: Date, limit: number, onlyId?: string): Promise<DueCampaign[]> {
    const rows = await this.due(now, limit)
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
        'c.catch_up_policy',
        'c.catch_up_max_lateness_seconds',
        'c.catch_up_through',
        // the unique (campaign_id, scheduled_at) index answers this backwards in a few rows
        sql<Date | null>`(select max(p.scheduled_at) from runs p where p.campaign_id = c.id and p.trigger = 'schedule')`.as('last_scheduled_at'),
      ])
      .$if(onlyId !== undefined, (q) => q.where('c.id', '=', onlyId!))
      .where(accountCanSend('a', now))
      .where(({ not, exists, selectFrom }) =>
        // a test send's run neither waits for nor holds back the campaign's (migrations/0015)
        not(
          exists(
            selectFrom('runs as r')
              .select('r.id')
              .whereRef('r.campaign_id', '=', 'c.id')
              .where('r.status', 'in', OPEN_RUN_STATUSES)
              .where('r.trigger', '<>', 'test'),
          ),
        ),
      )
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
      catchUpPolicy: r.catch_up_policy,
      catchUpMaxLatenessSeconds: r.catch_up_max_lateness_seconds,
      catchUpThrough: r.catch_up_through,
    }));
  }

  /**
   * A tick's writes for its decided campaigns in one statement: creates `runs` (insertRuns:
   * the ids of those actually created are returned) and moves every campaign of `advances` to
   * its next occurrence, counting the occurrences it passed over and keeping where an `all`
   * catch-up stands (its no-account streak ends). Both read the campaigns as they stood before
   * the statement, so a run takes its targets whatever the advance writes.
   */
  async createRunsAndAdvance(runs: NewRun[], advances: CampaignAdvance[]): Promise<string[]> {
    if (runs.length === 0) {
      await advanceCampaigns(advances).execute(this.trx);
      return [];
    }
    const created = await sql<{ id: string }>`with ${runInserts(runs)}, advanced as (${advanceCampaigns(advances)}) select id from created`.execute(this.trx);
    return created.rows.map((r) => r.id);
  }

  /**
   * Due campaigns whose account cannot send (not active, or blocked until later), oldest due
   * first, locked like dueCampaigns: what the tick counts as `no-account` and re-checks.
   */
  async dueWithoutAccount(now: Date, limit: number): Promise<HeldCampaign[]> {
    const rows = await this.due(now, limit)
      .select(['c.id', 'c.account_id', 'a.status', 'a.blocked_until', 'c.timezone', 'c.schedule', 'c.next_run_at', 'c.no_account_streak'])
      .where(sql<boolean>`not ${accountCanSend('a', now)}`)
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
        and not exists (select 1 from runs o where o.campaign_id = r.campaign_id and o.status in (${statusList(OPEN_RUN_STATUSES)}) and o.trigger <> 'test')
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
   * made by the scheduler; each run moves to its next job step (nextJobStep). Returns the runs
   * actually resumed, with the job step each moved to.
   */
  async autoResume(resumes: AutoResume[], now: Date): Promise<ResumedRun[]> {
    if (resumes.length === 0) return [];
    const resume = resumeRun(sql`v.window_end_at`, now);
    const result = await sql<{ id: string; job_seq: number }>`
      update runs r
      set ${resume.set}
      from unnest(
        ${sql.val(resumes.map((a) => a.id))}::uuid[],
        ${sql.val(resumes.map((a) => a.expectedSeq))}::int[],
        ${sql.val(resumes.map((a) => a.windowEndAt?.toISOString() ?? null))}::timestamptz[]
      ) as v(id, expected_seq, window_end_at)
      where r.id = v.id and ${resume.from} and r.job_seq = v.expected_seq
      returning r.id, r.job_seq
    `.execute(this.trx);
    return result.rows.map((r) => ({ id: r.id, jobSeq: r.job_seq }));
  }
}

/** The update that moves each campaign of `advances` on (TickTransaction.createRunsAndAdvance). */
function advanceCampaigns(advances: CampaignAdvance[]): RawBuilder<unknown> {
  return sql`
    update campaigns c
    set next_run_at = v.next_run_at, active = v.active, no_account_streak = 0, updated_at = c.updated_at,
      skipped_count = c.skipped_count + v.skipped,
      last_skipped_at = greatest(c.last_skipped_at, v.last_skipped_at),
      catch_up_through = v.catch_up_through
    from unnest(
      ${sql.val(advances.map((a) => a.id))}::uuid[],
      ${sql.val(advances.map((a) => a.nextRunAt?.toISOString() ?? null))}::timestamptz[],
      ${sql.val(advances.map((a) => a.active))}::boolean[],
      ${sql.val(advances.map((a) => a.skipped))}::bigint[],
      ${sql.val(advances.map((a) => a.lastSkippedAt?.toISOString() ?? null))}::timestamptz[],
      ${sql.val(advances.map((a) => a.catchUpThrough?.toISOString() ?? null))}::timestamptz[]
    ) as v(id, next_run_at, active, skipped, last_skipped_at, catch_up_through)
    where c.id = v.id
  `;
}
