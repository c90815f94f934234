import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { DB } from '../types.js';
import { chatVariablesSql, partsUseBuiltins } from './chat-variables-sql.js';
import { dueCampaigns, type DueCampaign } from './due-campaigns.js';
import { occurrenceRun, planDue } from './occurrence-run.js';
import { createdRuns, createdTestRun } from './run-repository.js';
import type { CampaignAdvance, FirstRun, NewRun, RunIds, RunPlan } from './run-shapes.js';

export type { NewRun, RunIds } from './run-shapes.js';

// Every run is created here: tick and instant start (createDueRuns), first run (runInserts), run now, test send.

/** Inserts runs and their targets in one statement; a run refused by the one-per-occurrence or one-open-run index is not created. The ids created. */
export async function insertRuns(db: Kysely<DB> | Transaction<DB>, runs: NewRun[]): Promise<string[]> {
  if (runs.length === 0) return [];
  const created = await sql<{ id: string }>`with ${runInserts(runs)} select id from created`.execute(db);
  return created.rows.map((r) => r.id);
}

/** The tick's and the instant start's writes in one statement: the runs, and every campaign of `advances` moved to its next occurrence. The ids created. */
export async function createDueRuns(trx: Transaction<DB>, runs: NewRun[], advances: CampaignAdvance[]): Promise<string[]> {
  if (runs.length === 0) {
    await advanceCampaigns(advances).execute(trx);
    return [];
  }
  const created = await sql<{ id: string }>`with ${runInserts(runs)}, advanced as (${advanceCampaigns(advances)}) select id from created`.execute(trx);
  return created.rows.map((r) => r.id);
}

/** A due campaign planned as the tick plans it (planDue): its run and advance, or null for another plan (left to the tick). Throws planDue's problem. */
export function planDueRun(c: DueCampaign, now: Date, jitterMs: number, ids: RunIds): (FirstRun & { plan: RunPlan }) | null {
  const plan = planDue(c, now, jitterMs);
  return plan.kind === 'run' ? { ...occurrenceRun(c, plan, ids.runId, ids.jobId), plan } : null;
}

/** The API's instant start, in the transaction that saved the campaign, through the tick's due query, plan and statement. */
export async function createDueRun(
  trx: Transaction<DB>,
  campaignId: string,
  now: Date,
  jitterMs: number,
  ids: RunIds,
): Promise<(FirstRun & { plan: RunPlan }) | null> {
  const [due] = await dueCampaigns(trx, now, 1, campaignId);
  const planned = due ? planDueRun(due, now, jitterMs, ids) : null;
  if (!planned) return null;
  const created = await createDueRuns(trx, [planned.run], [planned.advance]);
  return created.length > 0 ? planned : null;
}

/** Inserts a test send's run and its one target (`chatId` in topic `threadId`, `vars`); no gate applies (migrations/0015). */
export async function insertTestRun(
  db: Kysely<DB> | Transaction<DB>,
  run: Omit<NewRun, 'trigger' | 'ignoreInterval'>,
  chatId: string,
  vars: Record<string, string> | null,
  threadId = 0,
): Promise<void> {
  await sql`
    with ${createdTestRun({ ...run, trigger: 'test', ignoreInterval: true })}
    insert into run_targets (run_id, chat_id, thread_id, next_attempt_at, vars)
    select id, ${chatId}, ${threadId}::bigint, 'epoch'::timestamptz, ${vars === null ? null : JSON.stringify(vars)}::jsonb from created`.execute(db);
}

/**
 * insertRuns' statement as CTEs (`created`), for a statement writing more; `campaigns`: the table or an insert's rows.
 * Chats: inline targets and audience members now, each once (topics on Telegram only), held by their interval gate
 * (migrations/0002) unless ignored; directory built-ins under their own variables.
 */
export function runInserts(runs: NewRun[], campaigns: RawBuilder<unknown> = sql`campaigns`): RawBuilder<unknown> {
  const builtins = runs.map((r) => partsUseBuiltins(r.parts));
  const withBuiltins = builtins.some(Boolean);
  const fits = (accountId: RawBuilder<unknown>) =>
    sql`(m.thread_id = 0 or (select a.platform in ('telegram', 'telegram_user') from accounts a where a.id = ${accountId}))`;
  const total = sql`coalesce(cardinality(c.targets), 0)
        + case when cardinality(c.audience_ids) > 0 then (select count(*) from audience_targets(c.audience_ids, target_keys(c.targets, c.target_threads)) as m where ${fits(sql`r.account_id`)}) else 0 end`;
  return sql`
    ${createdRuns(runs, campaigns, total)}, targets as (
      insert into run_targets (run_id, chat_id, thread_id, next_attempt_at, vars)
      select r.id, t.chat_id, t.thread_id,
        case when r.ignored_interval then 'epoch'::timestamptz else interval_gate(r.campaign_id, t.chat_id, r.id, r.scheduled_at) end,
        ${withBuiltins ? sql`case when b.builtins then ${chatVariablesSql(sql`t.vars`, 'd')} else t.vars end` : sql`t.vars`}
      from created r
      join ${campaigns} c on c.id = r.campaign_id
      ${withBuiltins ? sql`join unnest(${sql.val(runs.map((r) => r.id))}::uuid[], ${sql.val(builtins)}::boolean[]) as b(run_id, builtins) on b.run_id = r.id` : sql``}
      cross join lateral (
        -- a topic's variables under its target key (migrations/0039), a chat's under its id
        select t.chat_id, coalesce(c.target_threads[t.i], 0) as thread_id,
          c.target_vars -> (t.chat_id || case when coalesce(c.target_threads[t.i], 0) = 0 then '' else chr(31) || c.target_threads[t.i]::text end) as vars
        from unnest(c.targets) with ordinality as t(chat_id, i)
        union all
        select m.chat_id, m.thread_id, m.vars from audience_targets(c.audience_ids, target_keys(c.targets, c.target_threads)) as m
        where cardinality(c.audience_ids) > 0 and ${fits(sql`r.account_id`)}
      ) as t
      ${withBuiltins ? sql`left join chat_directory d on b.builtins and d.account_id = r.account_id and d.chat_id = t.chat_id` : sql``}
      on conflict do nothing
    )
  `;
}

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
