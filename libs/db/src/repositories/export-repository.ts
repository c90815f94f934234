import { sql, type Kysely, type QueryResult, type RawBuilder } from 'kysely';
import type { DB } from '../types.js';

export interface ExportLine {
  type: 'tenant' | 'account' | 'campaign' | 'audience' | 'audience_member' | 'media' | 'webhook' | 'run' | 'run_target';
  data: Record<string, unknown>;
}

const PAGE = 1000;

/**
 * A tenant's data a page at a time for `GET /v1/export`, no secrets or media bytes; each table read by its
 * key in pages of 1,000.
 */
export class ExportRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async *lines(tenantId: string): AsyncGenerator<ExportLine> {
    const t = sql`${tenantId}::uuid`;
    yield* this.paged('tenant', sql`select id, name, created_at, history_retention_ms from tenants where id = ${t}`);
    yield* this.paged(
      'account',
      sql`select id, platform, name, external_id, status, max_send_per_minute, opt_out_keywords, created_at, updated_at from accounts where tenant_id = ${t} and deleted_at is null`,
    );
    yield* this.paged(
      'campaign',
      sql`select id, account_id, name, timezone, schedule, window_start, window_end, messages, targets, target_vars, target_threads::int[] as target_threads, audience_ids, active, created_at, updated_at
            from campaigns where tenant_id = ${t} and deleted_at is null`,
    );
    yield* this.paged('audience', sql`select id, name, member_count, created_at from audiences where tenant_id = ${t}`);
    yield* this.paged('media', sql`select id, content_type, size, sha256, filename, created_at from media where tenant_id = ${t}`);
    yield* this.paged('webhook', sql`select id, url, events, active, created_at from webhooks where tenant_id = ${t}`);
    let after = { audience: '00000000-0000-0000-0000-000000000000', chat: '', thread: -1 };
    for (;;) {
      const rows = await sql<{ audience_id: string; chat_id: string; thread_id: number }>`
        select m.audience_id, m.chat_id, m.thread_id, m.vars, m.created_at from audience_members m join audiences a on a.id = m.audience_id
         where a.tenant_id = ${t} and (m.audience_id, m.chat_id, m.thread_id) > (${after.audience}::uuid, ${after.chat}, ${after.thread}::bigint)
         order by m.audience_id, m.chat_id, m.thread_id limit ${PAGE}`.execute(this.db);
      for (const row of rows.rows) yield { type: 'audience_member', data: row };
      if (rows.rows.length < PAGE) break;
      const last = rows.rows[rows.rows.length - 1]!;
      after = { audience: last.audience_id, chat: last.chat_id, thread: last.thread_id };
    }
    // runs by (created_at, id), runs_tenant_idx's order
    let before: { at: string; id: string } | null = null;
    for (;;) {
      const older: RawBuilder<unknown> = before === null ? sql`true` : sql`(created_at, id) < (${before.at}::timestamptz, ${before.id}::uuid)`;
      const runs: QueryResult<{ id: string; cursor_at: string }> = await sql<{ id: string; cursor_at: string }>`
        select id, campaign_id, account_id, trigger, status, total, scheduled_at, started_at, finished_at, error_summary, summary_counts, history_purged_at, created_at,
               to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at
          from runs where tenant_id = ${t} and ${older} order by created_at desc, id desc limit ${PAGE}`.execute(this.db);
      for (const { cursor_at: _, ...run } of runs.rows) {
        yield { type: 'run', data: run };
        let afterChat = '';
        let afterThread = -1;
        for (;;) {
          const targets = await sql<{ chat_id: string; thread_id: number }>`
            select run_id, chat_id, thread_id, status, attempts, sent_at, error_code, error_message, message_ids from run_targets
             where run_id = ${run.id}::uuid and (chat_id, thread_id) > (${afterChat}, ${afterThread}::bigint) order by chat_id, thread_id limit ${PAGE}`.execute(
            this.db,
          );
          for (const target of targets.rows) yield { type: 'run_target', data: target };
          if (targets.rows.length < PAGE) break;
          const last = targets.rows[targets.rows.length - 1]!;
          afterChat = last.chat_id;
          afterThread = last.thread_id;
        }
      }
      if (runs.rows.length < PAGE) break;
      const last: { id: string; cursor_at: string } = runs.rows[runs.rows.length - 1]!;
      before = { at: last.cursor_at, id: last.id };
    }
  }

  private async *paged(type: ExportLine['type'], query: ReturnType<typeof sql>): AsyncGenerator<ExportLine> {
    const rows = await query.execute(this.db);
    for (const row of rows.rows as Record<string, unknown>[]) yield { type, data: row };
  }
}
