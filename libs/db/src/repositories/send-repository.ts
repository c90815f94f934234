import { sql, type Kysely } from 'kysely';
import { statusList } from './status-sql.js';
import { OPEN_RUN_STATUSES } from '@metronome/core';
import type { DB, PausedReason, RunStatus } from '../types.js';
import { nextJobStep, type JobStep } from './next-job-step.js';
import { progressStatement, toProgress } from './run-progress.js';
import type { RecentSends, RunForSend, RunProgress } from './send-shapes.js';

export type { AccountHealthRow, RecentSends, RunForSend, RunProgress } from './send-shapes.js';

/** The sender's queries on runs, accounts and media: one method, one statement (target writes: TargetSendRepository). */
export class SendRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * The run, its campaign and account, and when each of its targets due by `dueBy` comes due
   * (the earliest `dueLimit`: a job claims no more than that).
   */
  async loadRun(runId: string, dueBy: Date, dueLimit: number): Promise<RunForSend | null> {
    const row = await this.db
      .selectFrom('runs as r')
      .innerJoin('campaigns as c', 'c.id', 'r.campaign_id')
      .innerJoin('accounts as a', 'a.id', 'r.account_id')
      .select([
        'r.id',
        'r.status',
        'r.trigger',
        'r.job_id',
        'r.job_seq',
        'r.parts',
        'r.total',
        'r.scheduled_at',
        'r.first_send_at',
        'r.window_end_at',
        'c.id as campaign_id',
        'c.name as campaign_name',
        'c.timezone',
        'c.window_start',
        'c.window_end',
        'a.id as account_id',
        'a.platform',
        'a.external_id',
        'a.credentials',
        'a.status as account_status',
        'a.blocked_until',
        'a.max_send_per_minute',
        'a.group_concurrency',
        'a.send_delay_min_seconds',
        'a.send_delay_max_seconds',
        'a.hourly_cap',
        'a.daily_cap',
        'a.warmup',
        'a.cooling_until',
        'a.cooling_reason',
        'a.flood_waits',
        'a.send_outcomes',
        'a.pace_factor',
        'a.pace_since',
        'a.last_cooled_at',
        'a.last_cooling_ms',
        'a.typing',
        sql<(Date | string)[] | null>`(
          select array_agg(d.next_attempt_at order by d.next_attempt_at) from (
            select t.next_attempt_at from run_targets t
            where t.run_id = r.id and t.status = 'pending' and t.next_attempt_at <= ${dueBy}
            order by t.next_attempt_at limit ${dueLimit}
          ) d)`.as('due_times'),
      ])
      .where('r.id', '=', runId)
      .executeTakeFirst();
    if (!row) return null;
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
        status: row.account_status,
        blockedUntil: row.blocked_until,
        maxSendPerMinute: row.max_send_per_minute,
        groupConcurrency: row.group_concurrency,
        sendDelaySeconds:
          row.send_delay_min_seconds === null || row.send_delay_max_seconds === null ? null : { min: row.send_delay_min_seconds, max: row.send_delay_max_seconds },
        hourlyCap: row.hourly_cap,
        dailyCap: row.daily_cap,
        warmup: row.warmup,
        typing: row.typing,
        cooling: row.account_status === 'cooling' && row.cooling_until ? { until: row.cooling_until, reason: row.cooling_reason ?? 'cooling' } : null,
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

  /**
   * The account's requests since `since`, from its runs' targets: a delivered chat counts its
   * parts at `sent_at`; a chat with a request begun or answered and not delivered (failed,
   * unknown, in flight, or waiting to retry) counts its delivered parts and one more, at its
   * latest stamp. Never fewer than the platform received: a send begun by a replica that lost
   * its lock is counted from the moment it was stamped. Runs are found by
   * runs_account_finished_idx (open or finished since), their targets by primary key.
   */
  async recentSends(accountId: string, since: Date): Promise<RecentSends> {
    const rows = await this.db
      .selectFrom('runs as r')
      .innerJoin('run_targets as t', 't.run_id', 'r.id')
      .select([
        sql<Date>`greatest(t.sent_at, t.send_started_at, t.updated_at)`.as('at'),
        sql<number>`(t.parts_sent + case when t.status <> 'sent' and (t.attempts > 0 or t.send_started_at is not null) then 1 else 0 end)::int`.as('n'),
      ])
      .where('r.account_id', '=', accountId)
      .where(sql<boolean>`coalesce(r.finished_at, 'infinity'::timestamptz) >= ${since}`)
      .where(sql<boolean>`greatest(t.sent_at, t.send_started_at, t.updated_at) >= ${since}`)
      .where((eb) => eb.or([eb('t.parts_sent', '>', 0), eb('t.attempts', '>', 0), eb('t.send_started_at', 'is not', null)]))
      .execute();
    const times: number[] = [];
    let lastAt: number | null = null;
    for (const row of rows) {
      const at = row.at.getTime();
      for (let i = 0; i < row.n; i++) times.push(at);
      if (row.n > 0 && (lastAt === null || at > lastAt)) lastAt = at;
    }
    return { times, lastAt };
  }

  /** queued → running (first job), stamping started_at once. False when the run is no longer open. */
  /**
   * The run starts (or resumes) sending; in the same statement its pending targets on the
   * account's suppression list are skipped (code `suppressed`), so a queued run pays nothing more.
   */
  async markRunning(runId: string, now: Date): Promise<boolean> {
    const result = await sql<{ id: string }>`
      with suppressed as (
        update run_targets t
           set status = 'skipped', error_code = 'suppressed',
               error_message = 'the chat is on the account''s suppression list', updated_at = ${now}
          from runs r, account_suppressions s
         where t.run_id = ${runId} and r.id = t.run_id and r.status = 'queued'
           and s.account_id = r.account_id and s.chat_id = t.chat_id and t.status = 'pending'
        returning 1
      )
      update runs set status = 'running', started_at = coalesce(started_at, ${now}), updated_at = ${now}
       where id = ${runId} and status in (${statusList(OPEN_RUN_STATUSES)})
      returning id`.execute(this.db);
    return result.rows.length > 0;
  }

  /** A chat that answered blocked, kicked, forbidden or not found joins the account's suppression list. */
  async suppress(accountId: string, chatId: string, reason: string, now: Date): Promise<void> {
    await this.db
      .insertInto('account_suppressions')
      .values({ account_id: accountId, chat_id: chatId, reason, created_at: now })
      .onConflict((oc) => oc.columns(['account_id', 'chat_id']).doNothing())
      .execute();
  }

  async progress(runId: string): Promise<RunProgress> {
    const result = await progressStatement(runId, null).execute(this.db);
    return toProgress(result.rows[0]!);
  }

  /** Ends a running run (success/partial/failed). No effect on a run an operator paused or cancelled meanwhile. */
  async finish(runId: string, status: 'success' | 'partial' | 'failed', summary: string | null, now: Date): Promise<boolean> {
    const result = await this.db
      .updateTable('runs')
      .set({ status, finished_at: now, error_summary: summary, paused_reason: null, updated_at: now })
      .where('id', '=', runId)
      .where('status', 'in', OPEN_RUN_STATUSES)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Pauses an open run with its reason and summary; its pending targets stay pending. */
  async pause(runId: string, reason: PausedReason, summary: string | null, now: Date): Promise<boolean> {
    const result = await this.db
      .updateTable('runs')
      .set({ status: 'paused', paused_reason: reason, error_summary: summary, updated_at: now })
      .where('id', '=', runId)
      .where('status', 'in', OPEN_RUN_STATUSES)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Fails a run that reached its window close before any send: pending targets become skipped. */
  async failBeforeFirstSend(runId: string, summary: string, now: Date): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('runs')
        .set({ status: 'failed', finished_at: now, error_summary: summary, updated_at: now })
        .where('id', '=', runId)
        .where('status', 'in', OPEN_RUN_STATUSES)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
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

  /** Persists a flood wait so every replica and the scheduler honour it. Only ever extends. */
  async blockAccount(accountId: string, until: Date, now: Date): Promise<void> {
    await this.db
      .updateTable('accounts')
      .set({ blocked_until: sql`greatest(coalesce(blocked_until, ${until}), ${until})`, updated_at: now })
      .where('id', '=', accountId)
      .execute();
  }

  /** The account was logged out or banned: it becomes disconnected and all its open runs pause. */
  async disconnectAccount(accountId: string, reason: string, now: Date): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('accounts').set({ status: 'disconnected', updated_at: now }).where('id', '=', accountId).execute();
      await trx
        .updateTable('runs')
        .set({ status: 'paused', paused_reason: 'account_unavailable', error_summary: reason, updated_at: now })
        .where('account_id', '=', accountId)
        .where('status', 'in', OPEN_RUN_STATUSES)
        .execute();
    });
  }

  /** A still-valid platform reference for a media on an account, if one was uploaded. */
  async mediaRef(accountId: string, mediaId: string, now: Date): Promise<{ ref: string; expiresAt: Date; contentType: string; filename: string | null } | null> {
    const row = await this.db
      .selectFrom('media_uploads as u')
      .innerJoin('media as m', 'm.id', 'u.media_id')
      .select(['u.ref', 'u.expires_at', 'm.content_type', 'm.filename'])
      .where('u.account_id', '=', accountId)
      .where('u.media_id', '=', mediaId)
      .where('u.expires_at', '>', now)
      .executeTakeFirst();
    return row ? { ref: row.ref, expiresAt: row.expires_at, contentType: row.content_type, filename: row.filename } : null;
  }

  async saveMediaRef(accountId: string, mediaId: string, ref: string, expiresAt: Date): Promise<void> {
    await this.db
      .insertInto('media_uploads')
      .values({ account_id: accountId, media_id: mediaId, ref, expires_at: expiresAt })
      .onConflict((oc) => oc.columns(['account_id', 'media_id']).doUpdateSet({ ref, expires_at: expiresAt, created_at: sql`now()` }))
      .execute();
  }

  /** Drops a media reference the platform refused, unless another upload has replaced it meanwhile. */
  async forgetMediaRef(accountId: string, mediaId: string, ref: string): Promise<void> {
    await this.db.deleteFrom('media_uploads').where('account_id', '=', accountId).where('media_id', '=', mediaId).where('ref', '=', ref).execute();
  }

  async mediaContent(mediaId: string): Promise<{ contentType: string; sha256: string; filename: string | null; bytes: Buffer } | null> {
    const row = await this.db
      .selectFrom('media')
      .select(['content_type', 'sha256', 'filename', 'bytes'])
      .where('id', '=', mediaId)
      .executeTakeFirst();
    if (!row || !row.bytes) return null;
    return { contentType: row.content_type, sha256: row.sha256, filename: row.filename, bytes: row.bytes };
  }

  /**
   * The platform moved a chat to a new id (a Telegram group upgraded to a supergroup). Only
   * while `owner` holds the target's lease: the target is renamed to `newChatId` and goes back
   * to `pending`, due at once, its attempts and delivered parts unchanged ('moved'); or, when
   * `newChatId` already is a target of the run, it becomes `skipped` so that chat is not sent
   * to twice ('skipped'). Either way the campaign's `targets` (and the chat's variables) follow,
   * so later runs use the new id; the run's own row keeps its variables as it is renamed. 'lost' when the lease was lost meanwhile (nothing changes).
   */
  async moveTarget(
    runId: string,
    campaignId: string,
    chatId: string,
    newChatId: string,
    owner: string,
    code: string,
    now: Date,
  ): Promise<'moved' | 'skipped' | 'lost'> {
    const message = `chat moved to ${newChatId}`;
    const result = await sql<{ moved: number; skipped: number }>`
      with held as (
        select chat_id, exists (select 1 from run_targets o where o.run_id = ${runId} and o.chat_id = ${newChatId}) as taken
        from run_targets
        where run_id = ${runId} and chat_id = ${chatId} and lease_owner = ${owner} and status = 'in_flight'
        for update
      ), moved as (
        update run_targets t
        set chat_id = ${newChatId}, status = 'pending', next_attempt_at = least(t.next_attempt_at, ${now}),
          lease_owner = null, lease_expires_at = null, send_started_at = null, error_code = ${code}, error_message = ${`moved from ${chatId}`}, updated_at = ${now}
        from held h
        where t.run_id = ${runId} and t.chat_id = h.chat_id and not h.taken
        returning t.chat_id
      ), skipped as (
        update run_targets t
        set status = 'skipped', lease_owner = null, lease_expires_at = null, send_started_at = null, error_code = ${code}, error_message = ${message}, updated_at = ${now}
        from held h
        where t.run_id = ${runId} and t.chat_id = h.chat_id and h.taken
        returning t.chat_id
      ), campaign as (
        update campaigns c
        set targets = case when ${newChatId}::text = any(c.targets) then array_remove(c.targets, ${chatId}::text)
          else array_replace(c.targets, ${chatId}::text, ${newChatId}::text) end,
          -- the old id's variables follow it to the new id, unless the new id is a target already (it keeps its own)
          target_vars = case when c.target_vars is null or not c.target_vars ? ${chatId}::text then c.target_vars
            when ${newChatId}::text = any(c.targets) then c.target_vars - ${chatId}::text
            else (c.target_vars - ${chatId}::text) || jsonb_build_object(${newChatId}::text, c.target_vars -> ${chatId}::text) end,
          updated_at = ${now}
        where c.id = ${campaignId} and ${chatId}::text = any(c.targets) and exists (select 1 from held)
        returning c.id
      )
      select (select count(*) from moved)::int as moved, (select count(*) from skipped)::int as skipped,
        (select count(*) from campaign)::int as campaigns
    `.execute(this.db);
    const row = result.rows[0]!;
    return row.moved > 0 ? 'moved' : row.skipped > 0 ? 'skipped' : 'lost';
  }
}
