import { OPEN_RUN_STATUSES, RUN_STATUSES } from '@metronome/core';
import { sql, type Kysely } from 'kysely';
import type { DB, RunStatus, TargetStatus } from '../types.js';
import { RunRepository, type Requeue } from './run-repository.js';
import { RUN_COLUMNS, scope, toRun, type RawRun, type RunEventRow, type RunRow, type RunWithWindow, type TargetRow } from './run-rows.js';

export type { RunEventRow, RunRow, RunWithWindow, TargetRow } from './run-rows.js';
export type { Requeue } from './run-repository.js';

/**
 * A page of a newest-first list: `before` is the last row's (created_at, id), `at` printed by PostgreSQL
 * with microseconds so a cursor keeps the position exactly.
 */
export interface ListPage {
  limit: number;
  before?: { at: string; id: string } | undefined;
}

/** `listTargets`' receipt filter: delivered, read, replied (or not). */
export interface ReceiptFilter {
  delivered?: boolean | undefined;
  read?: boolean | undefined;
  replied?: boolean | undefined;
}

export interface RunFilter {
  tenantId: string | null;
  status?: RunStatus | undefined;
  campaignId?: string | undefined;
  accountId?: string | undefined;
}

/** The operator's view of runs: reads, and the API's transitions (pause, resume, cancel, retry-failed), each RunRepository's one conditional UPDATE. */
export class RunControlRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async list(filter: RunFilter, page: ListPage): Promise<RunRow[]> {
    const result = await this.listQuery(filter, page).execute(this.db);
    return result.rows.map(toRun);
  }

  /** The statement `list` runs (a test reads its plan). */
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

  async findWithWindow(id: string, tenantId: string | null): Promise<RunWithWindow | null> {
    const result = await sql<RawRun & { timezone: string; window_start: string; window_end: string }>`
      select ${RUN_COLUMNS}, c.timezone, c.window_start, c.window_end
      from runs r join campaigns c on c.id = r.campaign_id
      where r.id = ${id}::uuid and ${scope(tenantId)}
    `.execute(this.db);
    const row = result.rows[0];
    return row ? { ...toRun(row), timezone: row.timezone, windowStart: row.window_start, windowEnd: row.window_end } : null;
  }

  /** A run's targets in (chat id, topic) order after `after`, each titled by the account's directory entry, else its `name` variable. */
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

  async pause(id: string, tenantId: string | null, now: Date): Promise<RunRow | null> {
    return new RunRepository(this.db).operatorPause(id, tenantId, now);
  }

  /** paused → queued at the next job step; null when not paused. Throws a unique violation while another run is open. */
  async resume(id: string, tenantId: string | null, q: Requeue): Promise<RunRow | null> {
    return new RunRepository(this.db).resume(id, tenantId, q);
  }

  async cancel(id: string, tenantId: string | null, now: Date): Promise<RunRow | null> {
    return new RunRepository(this.db).cancel(id, tenantId, now);
  }

  async cancelOpenOfCampaign(campaignId: string, now: Date): Promise<string[]> {
    return new RunRepository(this.db).cancelOpenOfCampaign(campaignId, now);
  }

  /**
   * A finished run's failed and unknown targets → pending, the run queued; null when nothing to retry or not
   * finished. Throws a unique violation while another run is open.
   */
  async retryFailed(id: string, tenantId: string | null, q: Requeue): Promise<RunRow | null> {
    return new RunRepository(this.db).retryFailed(id, tenantId, q);
  }

  async countRetriable(runId: string): Promise<number> {
    const row = await this.db
      .selectFrom('run_targets')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('run_id', '=', runId)
      .where('status', 'in', ['failed', 'unknown'])
      .executeTakeFirstOrThrow();
    return row.n;
  }

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

  /** Runs in each status, every status present (the metronome_runs gauge). */
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

  /** Runs due and not started yet, and the oldest one's age at `now`: the start lag still accumulating. */
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

  async lastEventId(): Promise<number> {
    const row = await sql<{ id: string | null }>`select max(id) as id from run_events`.execute(this.db);
    return Number(row.rows[0]?.id ?? 0);
  }

  /** Status-change events after `afterId` (and `alsoIds` again), oldest first, with their campaign; a tenant's read by run_events_tenant_idx. */
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
