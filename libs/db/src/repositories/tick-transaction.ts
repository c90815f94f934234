import { OPEN_RUN_STATUSES } from '@metronome/core';
import { sql, type Transaction } from 'kysely';
import type { DB } from '../types.js';
import { dueCampaigns, dueWithoutAccount, type DueCampaign, type HeldCampaign } from './due-campaigns.js';
import { createDueRuns } from './run-creation.js';
import { RunRepository, type AutoResume } from './run-repository.js';
import type { CampaignAdvance, NewRun } from './run-shapes.js';
import { statusList } from './status-sql.js';

export type { DueCampaign, HeldCampaign } from './due-campaigns.js';
export type { AutoResume } from './run-repository.js';
export type { CampaignAdvance } from './run-shapes.js';

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

export interface ResumedRun {
  id: string;
  jobSeq: number;
}

/** A campaign the scheduler cannot turn into a run: deactivated with `reason` (CONTRACT §4 `failed`). */
export interface Isolation {
  id: string;
  reason: string;
}

export class TickTransaction {
  constructor(private readonly trx: Transaction<DB>) {}

  async dueCampaigns(now: Date, limit: number): Promise<DueCampaign[]> {
    return dueCampaigns(this.trx, now, limit);
  }

  async createRunsAndAdvance(runs: NewRun[], advances: CampaignAdvance[]): Promise<string[]> {
    return createDueRuns(this.trx, runs, advances);
  }

  async dueWithoutAccount(now: Date, limit: number): Promise<HeldCampaign[]> {
    return dueWithoutAccount(this.trx, now, limit);
  }

  /** Records new no-account streaks in one statement; a pause reason deactivates the campaign with it. */
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

  /** Deactivates each campaign the tick could not turn into a run, the reason in `last_error`, so it fails once. */
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

  /** Runs `work` under a savepoint (a failing statement rolled back alone): only to find the rows a batch fails on. */
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

  /** Window-closed runs of active autoResume campaigns with no other open run, earliest window end first, locked. */
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

  async autoResume(resumes: AutoResume[], now: Date): Promise<ResumedRun[]> {
    return (await new RunRepository(this.trx).autoResume(resumes, now)).map((r) => ({ id: r.runId, jobSeq: r.jobSeq }));
  }
}
