import { OPEN_RUN_STATUSES, RUN_STATUSES } from '@metronome/core';
import { sql, type Kysely } from 'kysely';
import type { DB, RunStatus, TargetStatus } from '../types.js';
import { RunRepository, type Requeue } from './run-repository.js';
import { RUN_COLUMNS, scope, toRun, type RawRun, type RunEventRow, type RunRow, type RunWithWindow, type TargetRow } from './run-rows.js';

export type { RunEventRow, RunRow, RunWithWindow, TargetRow } from './run-rows.js';
export type { Requeue } from './run-repository.js';

/**
 * One page of a newest-first list. `before` is the (created_at, id) of the last row of the
 * previous page; `at` is created_at printed by PostgreSQL in UTC with microseconds, so the
 * position survives the round trip through a cursor exactly (a JS Date would cut the
 * microseconds and skip or repeat rows).
 */
export interface ListPage {
  limit: number;
  before?: { at: string; id: string } | undefined;
}

/** `listTargets`' receipt filter: targets a receipt said were delivered, read, or whose chat replied (or not). */
export interface ReceiptFilter {
  delivered?: boolean | undefined;
  read?: boolean | undefined;
  replied?: boolean | undefined;
}

export interface RunFilter {
  /** null: every tenant (the operator) */
  tenantId: string | null;
  status?: RunStatus | undefined;
  campaignId?: string | undefined;
  /** runs sent from this account (the run's account, fixed when the run was created) */
  accountId?: string | undefined;
}

/**
 * The operator's view of runs: reads, and the state transitions of CONTRACT §4 that the API
 * makes (pause, resume, cancel, retry-failed), each RunRepository's one conditional UPDATE, so of
 * two concurrent calls only one can win.
 */
export class RunControlRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /** Runs newest first. */
  async list(filter: RunFilter, page: ListPage): Promise<RunRow[]> {
    const result = await this.listQuery(filter, page).execute(this.db);
    return result.rows.map(toRun);
  }

  /** The one statement `list` runs; a test reads its plan to see that an index serves each filter. */
  listQuery(filter: RunFilter, page: ListPage) {
    const conditions = [scope(filter.tenantId)];
    if (filter.status) conditions.push(sql`r.status = ${filter.status}`);
    if (filter.campaignId) conditions.push(sql`r.campaign_id = ${filter.campaignId}::uuid`);
    if (filter.accountId) conditions.push(sql`r.account_id = ${filter.accountId}::uuid`);
    if (page.before) conditions.push(sql`(r.created_at, r.id) < (${page.before.at}::timestamptz, ${page.before.id}::uuid)`);
    return sql<RawRun>`
      select ${RUN_COLUMNS} from runs r
      where ${sql.join(conditions, sql` and `)}
      order by r.created_at desc, r.id desc
      limit ${page.limit}
    `;
  }

  async find(id: string, tenantId: string | null): Promise<RunRow | null> {
    const result = await sql<RawRun>`select ${RUN_COLUMNS} from runs r where r.id = ${id}::uuid and ${scope(tenantId)}`.execute(this.db);
    const row = result.rows[0];
    return row ? toRun(row) : null;
  }

  /** The run with its campaign's current timezone and delivery window. */
  async findWithWindow(id: string, tenantId: string | null): Promise<RunWithWindow | null> {
    const result = await sql<RawRun & { timezone: string; window_start: string; window_end: string }>`
      select ${RUN_COLUMNS}, c.timezone, c.window_start, c.window_end
      from runs r join campaigns c on c.id = r.campaign_id
      where r.id = ${id}::uuid and ${scope(tenantId)}
    `.execute(this.db);
    const row = result.rows[0];
    return row ? { ...toRun(row), timezone: row.timezone, windowStart: row.window_start, windowEnd: row.window_end } : null;
  }

  /**
   * A run's targets in (chat id, topic) order; `after` is the last target of the previous page.
   * Each with its title, in the same statement: the run's account's directory entry, else the
   * chat's own `name` variable as the run copied it (an audience member's).
   */
  async listTargets(
    runId: string,
    status: TargetStatus | undefined,
    limit: number,
    after: { chatId: string; threadId: number } | undefined,
    receipts: ReceiptFilter = {},
  ): Promise<TargetRow[]> {
    let query = this.db
      .selectFrom('run_targets as t')
      .innerJoin('runs as r', 'r.id', 't.run_id')
      .leftJoin('chat_directory as d', (j) => j.onRef('d.account_id', '=', 'r.account_id').onRef('d.chat_id', '=', 't.chat_id'))
      .select(['t.chat_id', 't.thread_id', 't.status', 't.attempts', 't.next_attempt_at', 't.sent_at', 't.error_code', 't.error_message', 't.ambiguous_at'])
      .select(['t.delivered_at', 't.read_at', 't.replied_at', 't.delivered_to', 't.read_by', 't.member_count'])
      .select(sql<string | null>`coalesce(nullif(d.title, ''), nullif(t.vars ->> 'name', ''))`.as('title'))
      .where('t.run_id', '=', runId);
    if (status) query = query.where('t.status', '=', status);
    for (const [flag, column] of [
      [receipts.delivered, 't.delivered_at'],
      [receipts.read, 't.read_at'],
      [receipts.replied, 't.replied_at'],
    ] as const) {
      if (flag !== undefined) query = query.where(column, flag ? 'is not' : 'is', null);
    }
    if (after !== undefined) query = query.where((eb) => eb(eb.refTuple('t.chat_id', 't.thread_id'), '>', eb.tuple(after.chatId, after.threadId)));
    const rows = await query.orderBy('t.chat_id').orderBy('t.thread_id').limit(limit).execute();
    return rows.map((t) => ({
      chatId: t.chat_id,
      title: t.title,
      threadId: t.thread_id === 0 ? null : t.thread_id,
      status: t.status,
      attempts: t.attempts,
      // The column default (the epoch, or -infinity which pg returns as a number) means "due at once".
      nextAttemptAt: t.next_attempt_at instanceof Date && t.next_attempt_at.getTime() > 0 ? t.next_attempt_at : null,
      sentAt: t.sent_at,
      errorCode: t.error_code,
      errorMessage: t.error_message,
      settledBy: t.status === 'sent' && t.ambiguous_at !== null ? 'platform' : null,
      deliveredAt: t.delivered_at,
      readAt: t.read_at,
      repliedAt: t.replied_at,
      deliveredTo: t.delivered_to,
      readBy: t.read_by,
      memberCount: t.member_count,
    }));
  }

  /** queued | running → paused by the operator. Null when the run is not in one of those states. */
  async pause(id: string, tenantId: string | null, now: Date): Promise<RunRow | null> {
    return new RunRepository(this.db).operatorPause(id, tenantId, now);
  }

  /**
   * paused → queued, moving to the next job step with a recomputed window end. Null when the run
   * is not paused (or another call moved it first). Throws a unique violation when the campaign
   * already has another queued or running run.
   */
  async resume(id: string, tenantId: string | null, q: Requeue): Promise<RunRow | null> {
    return new RunRepository(this.db).resume(id, tenantId, q);
  }

  /** queued | running | paused → cancelled; its pending targets become skipped (`cancelled`), in one statement. */
  async cancel(id: string, tenantId: string | null, now: Date): Promise<RunRow | null> {
    return new RunRepository(this.db).cancel(id, tenantId, now);
  }

  /** Cancels every open run of a campaign (when it is deleted); returns their ids. */
  async cancelOpenOfCampaign(campaignId: string, now: Date): Promise<string[]> {
    return new RunRepository(this.db).cancelOpenOfCampaign(campaignId, now);
  }

  /**
   * A finished run with failed or unknown targets → queued again, those targets → pending. Null
   * when the run is not finished, has nothing to retry, or another call moved it first. Throws a
   * unique violation when the campaign already has another queued or running run.
   */
  async retryFailed(id: string, tenantId: string | null, q: Requeue): Promise<RunRow | null> {
    return new RunRepository(this.db).retryFailed(id, tenantId, q);
  }

  /** Targets a retry-failed would re-queue (to tell "nothing to retry" from other refusals). */
  async countRetriable(runId: string): Promise<number> {
    const row = await this.db
      .selectFrom('run_targets')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('run_id', '=', runId)
      .where('status', 'in', ['failed', 'unknown'])
      .executeTakeFirstOrThrow();
    return row.n;
  }

  /** Whether another run of the campaign is queued or running (the one-open-run rule). */
  async otherOpenRun(campaignId: string, exceptRunId: string): Promise<string | null> {
    const row = await this.db
      .selectFrom('runs')
      .select('id')
      .where('campaign_id', '=', campaignId)
      .where('status', 'in', OPEN_RUN_STATUSES)
      .where('id', '<>', exceptRunId)
      .executeTakeFirst();
    return row?.id ?? null;
  }

  /** Number of runs in each status, every status present (for the metronome_runs gauge). */
  async countByStatus(): Promise<Record<RunStatus, number>> {
    const rows = await this.db
      .selectFrom('runs')
      .select(['status', sql<number>`count(*)::int`.as('n')])
      .groupBy('status')
      .execute();
    const out = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
    for (const row of rows) out[row.status] = row.n;
    return out;
  }

  /**
   * Runs that are due but have not sent anything yet (queued, scheduledAt passed, no first
   * send) and the age in seconds of the oldest at `now`: the start lag still accumulating,
   * which the sender's histogram only sees once the run finally starts.
   */
  async dueNotStarted(now: Date): Promise<{ count: number; oldestAgeSeconds: number }> {
    const row = await sql<{ n: number; oldest: Date | null }>`
      select count(*)::int as n, min(scheduled_at) as oldest
      from runs
      where status = 'queued' and scheduled_at <= ${now} and first_send_at is null
    `.execute(this.db);
    const first = row.rows[0];
    const oldest = first?.oldest ?? null;
    return { count: first?.n ?? 0, oldestAgeSeconds: oldest === null ? 0 : Math.max(0, (now.getTime() - oldest.getTime()) / 1000) };
  }

  /** The newest status-change event's id (0: none yet): where the API's live events start. */
  async lastEventId(): Promise<number> {
    const row = await sql<{ id: string | null }>`select max(id) as id from run_events`.execute(this.db);
    return Number(row.rows[0]?.id ?? 0);
  }

  /**
   * Status-change events after `afterId` (and those of `alsoIds`, ids read again), oldest first,
   * with their campaign: Last-Event-ID replay and the API's live events.
   * A tenant's are read by the event's own tenant (run_events_tenant_idx), not every tenant's by id.
   */
  async eventsAfter(afterId: number, tenantId: string | null, limit: number, alsoIds: number[] = []): Promise<RunEventRow[]> {
    const which = alsoIds.length === 0 ? sql`e.id > ${afterId}` : sql`(e.id > ${afterId} or e.id = any(${alsoIds}::bigint[]))`;
    const result = await sql<{ id: number; run_id: string; tenant_id: string; status: RunStatus; campaign_id: string; name: string }>`
      select e.id, e.run_id, e.tenant_id, e.status, c.id as campaign_id, c.name
      from run_events e join runs r on r.id = e.run_id join campaigns c on c.id = r.campaign_id
      where ${which} and ${tenantId === null ? sql`true` : sql`e.tenant_id = ${tenantId}::uuid`}
      order by e.id
      limit ${limit}
    `.execute(this.db);
    return result.rows.map((e) => ({
      id: Number(e.id),
      runId: e.run_id,
      tenantId: e.tenant_id,
      status: e.status,
      campaignId: e.campaign_id,
      campaignName: e.name,
    }));
  }
}
