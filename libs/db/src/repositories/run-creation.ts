import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { DB, MessagePart, RunTrigger } from '../types.js';
import { chatVariablesSql, partsUseBuiltins } from './chat-variables-sql.js';

/** One run to create: the occurrence of a campaign, with its parts snapshot and window. */
export interface NewRun {
  id: string;
  campaignId: string;
  tenantId: string;
  accountId: string;
  trigger: RunTrigger;
  parts: MessagePart[];
  scheduledAt: Date;
  windowEndAt: Date | null;
  jobId: string;
  /** run now that reaches every chat at once, not held by the per-chat interval (CONTRACT, run now) */
  ignoreInterval?: boolean;
}

/**
 * Inserts runs and all their targets in one statement, whatever the number of runs.
 * Targets come from each campaign's current target list, each with its own copy of its chat's
 * variables (personal messages: later edits of the campaign do not change the run's texts); for an interval campaign each one is
 * held until its chat's interval gate (no chat receives the campaign twice less than
 * everySeconds apart), unless the run ignores the interval. A run whose (campaign, scheduledAt)
 * already exists, or whose campaign already has an open run, is not created; the ids of the
 * runs actually created are returned.
 */
export async function insertRuns(db: Kysely<DB> | Transaction<DB>, runs: NewRun[]): Promise<string[]> {
  if (runs.length === 0) return [];
  const created = await sql<{ id: string }>`with ${runInserts(runs)} select id from created`.execute(db);
  return created.rows.map((r) => r.id);
}

/**
 * insertRuns' statement as CTEs, for a statement that writes more beside them (the tick's and
 * the instant start's, which move the campaigns on in the same round trip): `created` returns
 * the id of each run actually created. `runs` is not empty. `campaigns` is where the runs'
 * campaigns are read (id, targets, target_vars, target_threads, audience_ids): the table, or the rows a campaign
 * insert of the same statement returns (a statement does not see its own inserts in the table),
 * and a run whose campaign is not there is not created.
 *
 * A run's chats are the campaign's inline targets and the members of its audiences as they are
 * now (a snapshot: later edits of an audience do not reach this run), each chat once. A chat's
 * variables are its inline target's when it is one, else those of the first audience in
 * audience_ids that lists it; when the run's parts name a built-in variable (`{{chat.title}}`),
 * the chat's built-ins from the account's directory as it is now go under them (core
 * chatVariables: its own win). `total` counts those chats.
 */
export function runInserts(runs: NewRun[], campaigns: RawBuilder<unknown> = sql`campaigns`): RawBuilder<unknown> {
  // One statement: the targets are inserted from the runs the first insert returns. Each target
  // starts no earlier than its chat's interval gate (migrations/0002), which reads the campaign's
  // other runs (not this statement's new ones, which it excludes anyway); 'epoch' (what the gate
  // answers when nothing holds a chat back) for a run that ignores the interval.
  // Inline targets are distinct already (the API sees to it) and go in as they always did; a
  // campaign with audiences adds the members that are not inline targets, each once, from
  // audience_targets (migrations/0039; 0015's audience_chats with topics), read by the members'
  // primary key. A campaign without audiences calls nothing more (a one-time filter): the
  // statement costs what it did before. A member in a forum topic goes only to a Telegram
  // account's run: elsewhere the chat would get the message once per topic.
  // Built-ins are read only for runs whose parts name one: other runs' statement is unchanged.
  const builtins = runs.map((r) => partsUseBuiltins(r.parts));
  const withBuiltins = builtins.some(Boolean);
  const fits = (accountId: RawBuilder<unknown>) =>
    sql`(m.thread_id = 0 or (select a.platform in ('telegram', 'telegram_user') from accounts a where a.id = ${accountId}))`;
  return sql`
    created as (
      insert into runs (id, campaign_id, tenant_id, account_id, trigger, parts, total, scheduled_at, window_end_at, job_id, ignored_interval)
      select r.id, r.campaign_id, r.tenant_id, r.account_id, r.trigger, r.parts,
        coalesce(cardinality(c.targets), 0)
          + case when cardinality(c.audience_ids) > 0 then (select count(*) from audience_targets(c.audience_ids, target_keys(c.targets, c.target_threads)) as m where ${fits(sql`r.account_id`)}) else 0 end,
        r.scheduled_at, r.window_end_at, r.job_id, r.ignored_interval
      from unnest(
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
      ) as r(id, campaign_id, tenant_id, account_id, trigger, parts, scheduled_at, window_end_at, job_id, ignored_interval)
      join ${campaigns} c on c.id = r.campaign_id
      on conflict do nothing
      returning id, campaign_id, account_id, scheduled_at, ignored_interval
    ), targets as (
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
