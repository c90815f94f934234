import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../types.js';
import type { NewRun } from './run-creation.js';

/**
 * Inserts a test send's run (trigger `test`) and its one target in one statement: `chatId` (in topic `threadId`, 0: none),
 * with `vars` as its variables (null: none). Nothing gates it: not the per-chat interval, not
 * the one-open-run rule, not the one-run-per-occurrence rule (migrations/0015 leaves test runs
 * out of each); suppressed chats are the sender's, as for any run.
 */
export async function insertTestRun(
  db: Kysely<DB> | Transaction<DB>,
  run: Omit<NewRun, 'trigger' | 'ignoreInterval'>,
  chatId: string,
  vars: Record<string, string> | null,
  threadId = 0,
): Promise<void> {
  await sql`
    with created as (
      insert into runs (id, campaign_id, tenant_id, account_id, trigger, parts, total, scheduled_at, window_end_at, job_id, ignored_interval)
      values (${run.id}::uuid, ${run.campaignId}::uuid, ${run.tenantId}::uuid, ${run.accountId}::uuid, 'test', ${JSON.stringify(run.parts)}::jsonb, 1,
        ${run.scheduledAt}, ${run.windowEndAt}, ${run.jobId}, true)
      returning id
    )
    insert into run_targets (run_id, chat_id, thread_id, next_attempt_at, vars)
    select id, ${chatId}, ${threadId}::bigint, 'epoch'::timestamptz, ${vars === null ? null : JSON.stringify(vars)}::jsonb from created`.execute(db);
}
