import { OPEN_RUN_STATUSES } from '@metronome/core';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { AccountsTable, CampaignsTable, DB, PausedReason, RunsTable } from '../types.js';
import { nextJobStep, type JobStep } from './next-job-step.js';
import { progressStatement, toProgress } from './run-progress.js';
import type { RunForSend, RunProgress } from './send-shapes.js';
import { statusList } from './status-sql.js';
import { finishRun, pauseRun, startRun } from './run-status.js';

/** A run whose job is missing from Redis, found at job step `fromJobSeq`. */
export interface LostJob {
  runId: string;
  fromJobSeq: number;
}

/** A run handed to a new job step. */
export interface HandedOver {
  runId: string;
  jobSeq: number;
}

type Run = Selectable<RunsTable>;
type Campaign = Selectable<CampaignsTable>;
type Account = Selectable<AccountsTable>;

/** A run as loadRun reads it, with its campaign's and account's columns. */
type LoadedRunRow = Pick<Run, 'id' | 'status' | 'trigger' | 'job_id' | 'job_seq' | 'parts' | 'total' | 'scheduled_at' | 'first_send_at' | 'window_end_at'> &
  Pick<Campaign, 'timezone' | 'window_start' | 'window_end'> &
  Pick<
    Account,
    | 'platform'
    | 'external_id'
    | 'credentials'
    | 'proxy'
    | 'blocked_until'
    | 'max_send_per_minute'
    | 'group_concurrency'
    | 'send_delay_min_seconds'
    | 'send_delay_max_seconds'
    | 'hourly_cap'
    | 'daily_cap'
    | 'warmup'
    | 'cooling_until'
    | 'cooling_reason'
    | 'flood_waits'
    | 'send_outcomes'
    | 'pace_factor'
    | 'pace_since'
    | 'last_cooled_at'
    | 'last_cooling_ms'
    | 'typing'
    | 'platform_deduplicates'
  > & { campaign_id: string; campaign_name: string; account_id: string; account_status: Account['status']; due_times: (Date | string)[] | null };

/**
 * loadRun's columns. Written as SQL rather than with the query builder: every job loads its run,
 * and building this select (37 columns, two joins) cost more client CPU than the statement's
 * round trip; as text it costs next to nothing.
 */
const LOADED_RUN_COLUMNS = sql.raw(`
  r.id, r.status, r.trigger, r.job_id, r.job_seq, r.parts,
  r.total, r.scheduled_at, r.first_send_at, r.window_end_at, c.id as campaign_id, c.name as campaign_name,
  c.timezone, c.window_start, c.window_end, a.id as account_id, a.platform, a.external_id,
  a.credentials, a.proxy, a.status as account_status, a.blocked_until, a.max_send_per_minute, a.group_concurrency, a.send_delay_min_seconds,
  a.send_delay_max_seconds, a.hourly_cap, a.daily_cap, a.warmup, a.cooling_until, a.cooling_reason,
  a.flood_waits, a.send_outcomes, a.pace_factor, a.pace_since, a.last_cooled_at, a.last_cooling_ms,
  a.typing, a.platform_deduplicates`);

/**
 * The runs aggregate as the sender and the reconciler write it: load a run for a job, mark it
 * running, finish, pause or fail it, hand it to its next job. One method, one statement
 * (failBeforeFirstSend: one transaction). The operator's transitions are RunControlRepository's.
 */
export class RunRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * The run, its campaign and account, and when each of its earliest `dueLimit` pending targets
   * comes due (a job claims no more than that; which of them it waits for is the sender's rule,
   * libs/core waitsInline, as it depends on the pace in force and on when a lane takes each).
   */
  async loadRun(runId: string, dueLimit: number): Promise<RunForSend | null> {
    return (await this.loadRunMany([runId], dueLimit))[0]!;
  }

  /** loadRun for several runs in one statement (a sender's jobs that load together share it), in the order asked. */
  async loadRunMany(runIds: string[], dueLimit: number): Promise<(RunForSend | null)[]> {
    const rows = (
      await sql<LoadedRunRow>`
      select ${LOADED_RUN_COLUMNS},
        (select array_agg(d.next_attempt_at order by d.next_attempt_at) from (
          select t.next_attempt_at from run_targets t
          where t.run_id = r.id and t.status = 'pending'
          order by t.next_attempt_at limit ${dueLimit}
        ) d) as due_times
      from unnest(${runIds}::uuid[]) as q(id)
      join runs r on r.id = q.id
      join campaigns c on c.id = r.campaign_id
      join accounts a on a.id = r.account_id`.execute(this.db)
    ).rows;
    const byId = new Map(rows.map((row) => [row.id, row]));
    return runIds.map((id) => {
      const row = byId.get(id);
      return row ? toRunForSend(row) : null;
    });
  }

  /**
   * The run starts (or resumes) sending; in the same statement its pending targets on the
   * account's suppression list, or erased from its tenant, are skipped (code `suppressed`), so a
   * queued run pays nothing more.
   * queued → running stamps started_at once. False when the run is no longer open.
   */
  async markRunning(runId: string, now: Date): Promise<boolean> {
    return (await this.markRunningMany([{ runId, at: now }], now)).has(runId);
  }

  /**
   * markRunning for several runs in one statement (a sender's jobs that start together share
   * it), each started at its own `at`; returns the runs started. Each run is read by its key
   * alone, once (`starting`): with its status in a join's condition, a generic plan read it
   * through runs_open_idx, every queued run's entry, at each run's start.
   *
   * The arrays come through one-row subqueries, so a plan for given values assumes as many runs
   * as the generic plan does (10) and PostgreSQL keeps the generic one after five calls: seeing
   * 1–3 elements, each custom plan looked cheaper and the statement was planned at every call,
   * which cost as much as its work (bench/micro/run-start.mjs).
   */
  async markRunningMany(runs: { runId: string; at: Date }[], now: Date): Promise<Set<string>> {
    const start = startRun(sql.ref('a.at'));
    const result = await sql<{ id: string }>`
      with asked as materialized (
        select * from unnest((select ${runs.map((r) => r.runId)}::uuid[]), (select ${runs.map((r) => r.at.toISOString())}::timestamptz[])) as a(id, at)
      ), starting as materialized (
        -- a queued run's account and tenant (null once it runs: a continuation skips nothing again)
        select a.id, q.account_id, q.tenant_id from asked a
        cross join lateral (select case when r.status = 'queued' then r.account_id end as account_id,
          case when r.status = 'queued' then r.tenant_id end as tenant_id from runs r where r.id = a.id) q
      ), suppressed as (
        update run_targets t
           set status = 'skipped', error_code = 'suppressed',
               error_message = 'the chat is on the account''s suppression list', updated_at = ${now}
          from starting q join account_suppressions s on s.account_id = q.account_id
         where t.run_id = q.id and t.status = 'pending' and s.chat_id = t.chat_id
        returning 1
      ), erased as (
        -- chats erased from the tenant (migrations/0023) are known only by their salted hash
        update run_targets t
           set status = 'skipped', error_code = 'suppressed', error_message = 'the chat was erased', updated_at = ${now}
          from starting q join tenants tn on tn.id = q.tenant_id
         where t.run_id = q.id and t.status = 'pending'
           and exists (select 1 from erased_chats e where e.tenant_id = tn.id and e.chat_hash = sha256(tn.chat_salt || convert_to(t.chat_id, 'UTF8')))
        returning 1
      )
      update runs r set ${start.set}
        from asked a
       where r.id = a.id and ${start.from}
      returning r.id`.execute(this.db);
    return new Set(result.rows.map((r) => r.id));
  }

  async progress(runId: string): Promise<RunProgress> {
    const result = await progressStatement(runId, null).execute(this.db);
    return toProgress(result.rows[0]!);
  }

  /** Ends a running run (success/partial/failed). No effect on a run an operator paused or cancelled meanwhile. */
  async finish(runId: string, status: 'success' | 'partial' | 'failed', summary: string | null, now: Date): Promise<boolean> {
    const finish = finishRun(status, summary, now);
    const result = await sql`update runs r set ${finish.set} where r.id = ${runId} and ${finish.from}`.execute(this.db);
    return Number(result.numAffectedRows) > 0;
  }

  /** Pauses an open run with its reason and summary; its pending targets stay pending. */
  async pause(runId: string, reason: PausedReason, summary: string | null, now: Date): Promise<boolean> {
    const pause = pauseRun(reason, summary, now);
    const result = await sql`update runs r set ${pause.set} where r.id = ${runId} and ${pause.from}`.execute(this.db);
    return Number(result.numAffectedRows) > 0;
  }

  /** Fails a run that reached its window close before any send: pending targets become skipped. */
  async failBeforeFirstSend(runId: string, summary: string, now: Date): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const fail = finishRun('failed', summary, now);
      const result = await sql`update runs r set ${fail.set} where r.id = ${runId} and ${fail.from}`.execute(trx);
      if (Number(result.numAffectedRows) === 0) return false;
      await trx
        .updateTable('run_targets')
        .set({ status: 'skipped', error_code: 'window_closed', error_message: summary, updated_at: now })
        .where('run_id', '=', runId)
        .where('status', '=', 'pending')
        .execute();
      return true;
    });
  }

  /**
   * Hands the run to its next job: job_seq moves one step from `fromJobSeq` and job_id follows
   * (nextJobStep), only if the run is still at `fromJobSeq`, so two jobs of one run can never
   * both continue it. Null when another job or call moved it first.
   */
  async handOver(runId: string, fromJobSeq: number, now: Date): Promise<JobStep | null> {
    const result = await sql<{ job_seq: number; job_id: string }>`
      update runs r set ${nextJobStep('r')}, updated_at = ${now}
      where r.id = ${runId} and r.job_seq = ${fromJobSeq}
      returning r.job_seq, r.job_id
    `.execute(this.db);
    const row = result.rows[0];
    return row ? { jobSeq: row.job_seq, jobId: row.job_id } : null;
  }

  /**
   * Gives each run whose job was lost its next job step (nextJobStep: job_seq one further,
   * job_id derived from it), only where the run is still open and at the step the caller found
   * without a job: a job that reappears under the old id then does nothing. One statement for
   * the whole page; returns the runs handed over, with their new step.
   */
  async handOverLost(lost: LostJob[], now: Date): Promise<HandedOver[]> {
    if (lost.length === 0) return [];
    const result = await sql<{ id: string; job_seq: number }>`
      update runs r
      set ${nextJobStep('r')}, updated_at = ${now}
      from unnest(
        ${sql.val(lost.map((l) => l.runId))}::uuid[],
        ${sql.val(lost.map((l) => l.fromJobSeq))}::int[]
      ) as v(id, from_seq)
      where r.id = v.id and r.status in (${statusList(OPEN_RUN_STATUSES)}) and r.job_seq = v.from_seq
      returning r.id, r.job_seq
    `.execute(this.db);
    return result.rows.map((r) => ({ runId: r.id, jobSeq: r.job_seq }));
  }
}

/** A row of loadRunMany as the sender reads it. */
function toRunForSend(row: LoadedRunRow): RunForSend {
  return {
    runId: row.id,
    status: row.status,
    trigger: row.trigger,
    jobId: row.job_id,
    jobSeq: row.job_seq,
    parts: row.parts,
    total: row.total,
    scheduledAt: row.scheduled_at,
    firstSendAt: row.first_send_at,
    windowEndAt: row.window_end_at,
    campaignId: row.campaign_id,
    campaignName: row.campaign_name,
    timezone: row.timezone,
    windowStart: row.window_start,
    windowEnd: row.window_end,
    dueTimes: (row.due_times ?? []).map((t) => new Date(t).getTime()),
    account: {
      id: row.account_id,
      platform: row.platform,
      externalId: row.external_id,
      credentials: row.credentials,
      proxy: row.proxy,
      status: row.account_status,
      blockedUntil: row.blocked_until,
      maxSendPerMinute: row.max_send_per_minute,
      groupConcurrency: row.group_concurrency,
      sendDelaySeconds:
        row.send_delay_min_seconds === null || row.send_delay_max_seconds === null
          ? null
          : { min: row.send_delay_min_seconds, max: row.send_delay_max_seconds },
      hourlyCap: row.hourly_cap,
      dailyCap: row.daily_cap,
      warmup: row.warmup,
      typing: row.typing,
      platformDeduplicates: row.platform_deduplicates,
      cooling: row.account_status === 'cooling' ? { until: row.cooling_until, reason: row.cooling_reason ?? 'cooling' } : null,
      health: {
        floodWaits: row.flood_waits,
        outcomes: row.send_outcomes,
        paceFactor: row.pace_factor,
        paceSince: row.pace_since,
        lastCooledAt: row.last_cooled_at,
        lastCoolingMs: row.last_cooling_ms,
      },
    },
  };
}
