import { OPEN_RUN_STATUSES } from '@metronome/core';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB, PausedReason } from '../types.js';
import { nextJobStep, type JobStep } from './next-job-step.js';
import type { NewRun } from './run-shapes.js';
import { loadRuns } from './run-loads.js';
import { progressStatement, toProgress } from './run-progress.js';
import { RUN_COLUMNS, scope, toRun, type RawRun, type RunRow } from './run-rows.js';
import { cancelRun, demoteRun, expirePausedRun, finishRun, pauseRun, resumeRun, retryRun, startRun, type RunStatusChange } from './run-status.js';
import type { RunForSend, RunProgress } from './send-shapes.js';
import { statusList } from './status-sql.js';

// The one writer of `runs` (run-writer.test.ts): every INSERT, UPDATE and DELETE, as a method or an embedded CTE.

/** A run whose job is missing from Redis, found at job step `fromJobSeq`. */
export interface LostJob {
  runId: string;
  fromJobSeq: number;
}

export interface HandedOver {
  runId: string;
  jobSeq: number;
}

export interface Requeue {
  expectedSeq: number;
  windowEndAt: Date | null;
  now: Date;
}

export interface AutoResume {
  id: string;
  expectedSeq: number;
  windowEndAt: Date | null;
}

const INSERT_COLUMNS = sql.raw('id, campaign_id, tenant_id, account_id, trigger, parts, total, scheduled_at, window_end_at, job_id, ignored_interval');

function runValues(runs: NewRun[]): RawBuilder<unknown> {
  return sql`unnest(
    ${sql.val(runs.map((r) => r.id))}::uuid[],
    ${sql.val(runs.map((r) => r.campaignId))}::uuid[],
    ${sql.val(runs.map((r) => r.tenantId))}::uuid[],
    ${sql.val(runs.map((r) => r.accountId))}::uuid[],
    ${sql.val(runs.map((r) => r.trigger))}::text[],
    ${sql.val(runs.map((r) => JSON.stringify(r.parts)))}::jsonb[],
    ${sql.val(runs.map((r) => r.scheduledAt.toISOString()))}::timestamptz[],
    ${sql.val(runs.map((r) => r.windowEndAt?.toISOString() ?? null))}::timestamptz[],
    ${sql.val(runs.map((r) => r.jobId))}::text[],
    ${sql.val(runs.map((r) => r.ignoreInterval === true))}::boolean[]
  ) as r(id, campaign_id, tenant_id, account_id, trigger, parts, scheduled_at, window_end_at, job_id, ignored_interval)`;
}

/** The CTE `created`: `runs` whose campaign is in `campaigns c`, `total` counted over `r` and `c`; refused ones are skipped. */
export function createdRuns(runs: NewRun[], campaigns: RawBuilder<unknown>, total: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`created as (
      insert into runs (${INSERT_COLUMNS})
      select r.id, r.campaign_id, r.tenant_id, r.account_id, r.trigger, r.parts, ${total}, r.scheduled_at, r.window_end_at, r.job_id, r.ignored_interval
      from ${runValues(runs)}
      join ${campaigns} c on c.id = r.campaign_id
      on conflict do nothing
      returning id, campaign_id, account_id, scheduled_at, ignored_interval
    )`;
}

/** The CTE `created`: one test send's run (one target, no gate applies to it); returns its id. */
export function createdTestRun(run: NewRun): RawBuilder<unknown> {
  return sql`created as (
      insert into runs (${INSERT_COLUMNS})
      select r.id, r.campaign_id, r.tenant_id, r.account_id, r.trigger, r.parts, 1, r.scheduled_at, r.window_end_at, r.job_id, r.ignored_interval
      from ${runValues([run])}
      returning id
    )`;
}

/** The CTE `finished`: each run of `counted c` whose targets are all sent, finished `success`; returns r.id. */
export function finishedWhenAllSent(now: Date): RawBuilder<unknown> {
  const f = finishRun('success', null, now);
  return sql`finished as (
      update runs r set ${f.set}
      from counted c
      where r.id = c.run_id and ${f.from} and c.total > 0 and c.sent = c.total
      returning r.id
    )`;
}

/** The CTE `first_send`: `at` stamped as the first send of the runs `r` that `where` matches (over `from`) and have none yet. */
export function stampedFirstSend(at: Date, where: RawBuilder<unknown>, from: RawBuilder<unknown> | null, returning: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`first_send as (
        update runs r set first_send_at = ${at}
        ${from === null ? sql`` : sql`from ${from}`}
        where ${where} and r.first_send_at is null
        returning ${returning}
      )`;
}

/** The CTEs `r` (the open or paused runs `where` matches, cancelled; their rows) and `skipped` (their pending targets, with `message`). */
export function cancelledRuns(where: RawBuilder<unknown>, message: string, now: Date): RawBuilder<unknown> {
  const cancel = cancelRun(now);
  return sql`r as (
        update runs r set ${cancel.set}
        where ${where} and ${cancel.from}
        returning *
      ), skipped as (
        update run_targets t set status = 'skipped', error_code = 'cancelled', error_message = ${message}, updated_at = ${now}
        from r where t.run_id = r.id and t.status = 'pending'
      )`;
}

export class RunRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async loadRun(runId: string, dueLimit: number): Promise<RunForSend | null> {
    return (await this.loadRunMany([runId], dueLimit))[0]!;
  }

  async loadRunMany(runIds: string[], dueLimit: number): Promise<(RunForSend | null)[]> {
    return loadRuns(this.db, runIds, dueLimit);
  }

  async progress(runId: string): Promise<RunProgress> {
    const result = await progressStatement(runId, null).execute(this.db);
    return toProgress(result.rows[0]!);
  }

  /** The run starts (or resumes) sending, its suppressed or erased targets skipped; false when not open. */
  async markRunning(runId: string, now: Date): Promise<boolean> {
    return (await this.markRunningMany([{ runId, at: now }], now)).has(runId);
  }

  /** markRunning for several runs, each at its own `at`. Arrays through one-row subqueries keep one generic plan (bench/micro/run-start.mjs). */
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
      ), keyed as (
        -- telegram_user: a target typed in another case than its listed key (migrations/0044); apart, so other runs keep their plan
        update run_targets t
           set status = 'skipped', error_code = 'suppressed',
               error_message = 'the chat is on the account''s suppression list', updated_at = ${now}
          from starting q join accounts a on a.id = q.account_id and a.platform = 'telegram_user'
          join account_suppressions s on s.account_id = q.account_id
         where t.run_id = q.id and t.status = 'pending' and t.chat_id <> chat_key('telegram_user', t.chat_id) and s.chat_id = chat_key('telegram_user', t.chat_id)
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

  /** Ends a running run; not one an operator paused or cancelled meanwhile. */
  async finish(runId: string, status: 'success' | 'partial' | 'failed', summary: string | null, now: Date): Promise<boolean> {
    return this.change(runId, finishRun(status, summary, now));
  }

  async pause(runId: string, reason: PausedReason, summary: string | null, now: Date): Promise<boolean> {
    return this.change(runId, pauseRun(reason, summary, now));
  }

  private async change(runId: string, c: RunStatusChange): Promise<boolean> {
    const result = await sql`update runs r set ${c.set} where r.id = ${runId} and ${c.from}`.execute(this.db);
    return Number(result.numAffectedRows) > 0;
  }

  /** Fails a run whose window closed before any send, its pending targets skipped. */
  async failBeforeFirstSend(runId: string, summary: string, now: Date): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      if (!(await new RunRepository(trx).finish(runId, 'failed', summary, now))) return false;
      await trx
        .updateTable('run_targets')
        .set({ status: 'skipped', error_code: 'window_closed', error_message: summary, updated_at: now })
        .where('run_id', '=', runId)
        .where('status', '=', 'pending')
        .execute();
      return true;
    });
  }

  /** Hands the run to its next job step, only if still at `fromJobSeq`; null when another job moved it first. */
  async handOver(runId: string, fromJobSeq: number, now: Date): Promise<JobStep | null> {
    const result = await sql<{ job_seq: number; job_id: string }>`
      update runs r set ${nextJobStep('r')}, updated_at = ${now}
      where r.id = ${runId} and r.job_seq = ${fromJobSeq}
      returning r.job_seq, r.job_id
    `.execute(this.db);
    const row = result.rows[0];
    return row ? { jobSeq: row.job_seq, jobId: row.job_id } : null;
  }

  /** Next job step for each open run whose job was lost, if still at the step found. */
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

  /** The scheduler's resumes, paused → queued at the next job step. */
  async autoResume(resumes: AutoResume[], now: Date): Promise<HandedOver[]> {
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
    `.execute(this.db);
    return result.rows.map((r) => ({ runId: r.id, jobSeq: r.job_seq }));
  }

  async operatorPause(id: string, tenantId: string | null, now: Date): Promise<RunRow | null> {
    const pause = pauseRun('operator', undefined, now);
    return this.oneRun(sql`update runs r set ${pause.set} where r.id = ${id}::uuid and ${scope(tenantId)} and ${pause.from} returning ${RUN_COLUMNS}`);
  }

  async resume(id: string, tenantId: string | null, q: Requeue): Promise<RunRow | null> {
    const resume = resumeRun(q.windowEndAt, q.now);
    return this.oneRun(sql`
      update runs r set ${resume.set}
      where r.id = ${id}::uuid and ${scope(tenantId)} and ${resume.from} and r.job_seq = ${q.expectedSeq}
      returning ${RUN_COLUMNS}`);
  }

  async cancel(id: string, tenantId: string | null, now: Date): Promise<RunRow | null> {
    return this.oneRun(
      sql`with ${cancelledRuns(sql`r.id = ${id}::uuid and ${scope(tenantId)}`, 'run cancelled by the operator', now)} select ${RUN_COLUMNS} from r`,
    );
  }

  async cancelOpenOfCampaign(campaignId: string, now: Date): Promise<string[]> {
    const result = await sql<{ id: string }>`with ${cancelledRuns(sql`r.campaign_id = ${campaignId}::uuid`, 'campaign deleted', now)} select id from r`.execute(
      this.db,
    );
    return result.rows.map((r) => r.id);
  }

  async retryFailed(id: string, tenantId: string | null, q: Requeue): Promise<RunRow | null> {
    const retry = retryRun(q.windowEndAt, q.now);
    return this.oneRun(sql`
      with r as (
        update runs r set ${retry.set}
        where r.id = ${id}::uuid and ${scope(tenantId)} and ${retry.from} and r.job_seq = ${q.expectedSeq}
          and exists (select 1 from run_targets t where t.run_id = r.id and t.status in ('failed', 'unknown'))
        returning *
      ), requeued as (
        update run_targets t set status = 'pending', attempts = 0, error_code = null, error_message = null,
          next_attempt_at = default, lease_owner = null, lease_expires_at = null, updated_at = ${q.now}
        from r where t.run_id = r.id and t.status in ('failed', 'unknown')
      )
      select ${RUN_COLUMNS} from r`);
  }

  private async oneRun(statement: RawBuilder<unknown>): Promise<RunRow | null> {
    const row = (await (statement as RawBuilder<RawRun>).execute(this.db)).rows[0];
    return row ? toRun(row) : null;
  }

  async pauseOfAccount(accountId: string, reason: string, now: Date): Promise<void> {
    const pause = pauseRun('account_unavailable', reason, now);
    await sql`update runs r set ${pause.set} where r.account_id = ${accountId}::uuid and ${pause.from}`.execute(this.db);
  }

  /** Paused runs older than the TTL cancelled, their pending targets skipped; how many. */
  async expirePaused(now: Date, ttlMs: number): Promise<number> {
    const cutoff = new Date(now.getTime() - ttlMs);
    return this.db.transaction().execute(async (trx) => {
      const expire = expirePausedRun(now);
      const result = await sql<{ id: string }>`update runs r set ${expire.set} where ${expire.from} and r.updated_at < ${cutoff} returning r.id`.execute(trx);
      const expired = result.rows.map((r) => r.id);
      if (expired.length === 0) return 0;
      await trx
        .updateTable('run_targets')
        .set({ status: 'skipped', error_code: 'expired', updated_at: now })
        .where('run_id', 'in', expired)
        .where('status', '=', 'pending')
        .execute();
      return expired.length;
    });
  }

  /**
   * A late refusal: the account's `sent` target with `messageId` for `chatId` moves to `status`, and a
   * `success` run becomes `partial`; the run ids moved.
   */
  async refuseLate(
    accountId: string,
    chatId: string,
    messageId: string,
    status: 'failed' | 'unknown',
    code: string,
    message: string,
    now: Date,
  ): Promise<string[]> {
    const demote = demoteRun(now);
    const result = await sql<{ run_id: string }>`
      with moved as (
        update run_targets t set status = ${status}, error_code = ${code}, error_message = ${message}, updated_at = ${now}
        where t.chat_id = ${chatId} and t.status = 'sent' and ${messageId} = any(t.message_ids)
          and t.run_id in (select r.id from runs r where r.account_id = ${accountId}::uuid)
        returning t.run_id
      ), demoted as (
        update runs r set ${demote.set}
        where r.id in (select run_id from moved) and ${demote.from}
        returning r.id
      )
      select run_id from moved`.execute(this.db);
    return result.rows.map((r) => r.run_id);
  }

  /** Keeps each run's counts before its targets go (the first kept). */
  async keepSummaries(counts: Map<string, unknown>): Promise<void> {
    const ids = [...counts.keys()];
    await sql`
      update runs r set summary_counts = c.counts
        from unnest(${ids}::uuid[], ${ids.map((id) => JSON.stringify(counts.get(id)))}::jsonb[]) as c(id, counts)
       where r.id = c.id and r.summary_counts is null and r.history_purged_at is null`.execute(this.db);
  }

  async markPurged(runIds: string[], now: Date): Promise<void> {
    await sql`update runs set history_purged_at = ${now} where id = any(${runIds}::uuid[]) and history_purged_at is null`.execute(this.db);
  }

  async deleteSummaries(before: RawBuilder<unknown>, batch: number): Promise<number> {
    const result = await sql`
      delete from runs where id = any(array(
        select id from runs where history_purged_at is not null
           and finished_at < ${before}
         order by finished_at limit ${batch}))`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }

  /** Deletes up to `batch` runs of `runs` with no target or event left; how many. */
  async deleteEmptied(runs: RawBuilder<unknown>, batch: number): Promise<number> {
    const gone = await sql`
      delete from runs where id = any(array(
        select r.id from (${runs}) r
         where not exists (select 1 from run_targets t where t.run_id = r.id)
           and not exists (select 1 from run_events e where e.run_id = r.id)
         limit ${batch}))`.execute(this.db);
    return Number(gone.numAffectedRows);
  }
}
