import { sql, type Kysely } from 'kysely';
import type { CatchUpPolicy, DB, MessagePart, Schedule, TargetVarsByChat } from '../types.js';
import { accountCanSend } from './account-sql.js';
import { runInserts } from './run-creation.js';
import type { FirstRun } from './run-shapes.js';
import type { ListPage } from './run-control-repository.js';

export type { FirstRun } from './run-shapes.js';

/** A live (not deleted) campaign with its latest run. */
export interface CampaignRow {
  id: string;
  tenantId: string;
  accountId: string;
  name: string;
  timezone: string;
  schedule: Schedule;
  windowStart: string;
  windowEnd: string;
  messages: MessagePart[];
  targets: string[];
  /** the targets' variables by target key (core targetKey); null when none was given */
  targetVars: TargetVarsByChat | null;
  /** each target's forum topic, in order (0: none); null when none names one */
  targetThreads: number[] | null;
  audienceIds: string[];
  active: boolean;
  autoResume: boolean;
  nextRunAt: Date | null;
  pausedReason: string | null;
  /** why the scheduler deactivated the campaign, if it did */
  lastError: string | null;
  lastRunId: string | null;
  lastScheduledAt: Date | null;
  catchUpPolicy: CatchUpPolicy;
  catchUpMaxLatenessSeconds: number | null;
  catchUpThrough: Date | null;
  /** occurrences passed over without a run, and the latest of them */
  skippedCount: number;
  lastSkippedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  cursorAt: string;
}

/** A campaign as inserted (before its first run moved it on), and whether that run was created. */
export type SavedCampaign = CampaignRow & { firstRunCreated: boolean };

export interface NewCampaignRow {
  /** chosen by the caller when a first run is planned; otherwise the database's */
  id?: string;
  tenantId: string;
  accountId: string;
  name: string;
  timezone: string;
  schedule: Schedule;
  windowStart: string;
  windowEnd: string;
  messages: MessagePart[];
  targets: string[];
  targetVars: TargetVarsByChat | null;
  targetThreads: number[] | null;
  audienceIds: string[];
  active: boolean;
  autoResume: boolean;
  nextRunAt: Date | null;
  catchUpPolicy: CatchUpPolicy;
  catchUpMaxLatenessSeconds: number | null;
}

export interface CampaignChanges {
  accountId?: string;
  name?: string;
  timezone?: string;
  schedule?: Schedule;
  windowStart?: string;
  windowEnd?: string;
  messages?: MessagePart[];
  targets?: string[];
  targetVars?: TargetVarsByChat | null;
  targetThreads?: number[] | null;
  audienceIds?: string[];
  active?: boolean;
  autoResume?: boolean;
  nextRunAt?: Date | null;
  catchUpPolicy?: CatchUpPolicy;
  catchUpMaxLatenessSeconds?: number | null;
  clearAutoPause?: boolean;
  clearLastError?: boolean;
}

interface Raw {
  id: string;
  tenant_id: string;
  account_id: string;
  name: string;
  timezone: string;
  schedule: Schedule;
  window_start: string;
  window_end: string;
  messages: MessagePart[];
  targets: string[];
  target_vars: TargetVarsByChat | null;
  target_threads: number[] | null;
  audience_ids: string[];
  active: boolean;
  auto_resume: boolean;
  next_run_at: Date | null;
  paused_reason: string | null;
  last_error: string | null;
  last_run_id: string | null;
  last_scheduled_at: Date | null;
  catch_up_policy: CatchUpPolicy;
  catch_up_max_lateness_seconds: number | null;
  catch_up_through: Date | null;
  skipped_count: string;
  last_skipped_at: Date | null;
  created_at: Date;
  updated_at: Date;
  cursor_at: string;
}

const COLUMNS = sql`c.id, c.tenant_id, c.account_id, c.name, c.timezone, c.schedule, c.window_start, c.window_end,
  c.messages, c.targets, c.target_vars, c.target_threads::int[] as target_threads, c.audience_ids, c.active, c.auto_resume, c.next_run_at, c.paused_reason, c.last_error, c.created_at, c.updated_at,
  c.catch_up_policy, c.catch_up_max_lateness_seconds, c.catch_up_through, c.skipped_count, c.last_skipped_at,
  to_char(c.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_at,
  -- a test send is not one of the campaign's runs here (CONTRACT, Send a test)
  (select r.id from runs r where r.campaign_id = c.id and r.trigger <> 'test' order by r.created_at desc, r.id desc limit 1) as last_run_id,
  (select max(r.scheduled_at) from runs r where r.campaign_id = c.id and r.trigger = 'schedule') as last_scheduled_at`;

function toCampaign(c: Raw): CampaignRow {
  return {
    id: c.id,
    tenantId: c.tenant_id,
    accountId: c.account_id,
    name: c.name,
    timezone: c.timezone,
    schedule: c.schedule,
    windowStart: c.window_start,
    windowEnd: c.window_end,
    messages: c.messages,
    targets: c.targets,
    targetVars: c.target_vars,
    targetThreads: c.target_threads,
    audienceIds: c.audience_ids,
    active: c.active,
    autoResume: c.auto_resume,
    nextRunAt: c.next_run_at,
    pausedReason: c.paused_reason,
    lastError: c.last_error,
    lastRunId: c.last_run_id,
    lastScheduledAt: c.last_scheduled_at,
    catchUpPolicy: c.catch_up_policy,
    catchUpMaxLatenessSeconds: c.catch_up_max_lateness_seconds,
    catchUpThrough: c.catch_up_through,
    skippedCount: Number(c.skipped_count),
    lastSkippedAt: c.last_skipped_at,
    createdAt: c.created_at,
    updatedAt: c.updated_at,
    cursorAt: c.cursor_at,
  };
}

function varsJson(v: TargetVarsByChat | null): string | null {
  return v === null ? null : JSON.stringify(v);
}

function scope(tenantId: string | null) {
  return tenantId === null ? sql`true` : sql`c.tenant_id = ${tenantId}::uuid`;
}

/** Campaigns as the control API manages them. Deleted campaigns are invisible here. */
export class CampaignRepository {
  constructor(private readonly db: Kysely<DB>) {}

  /**
   * Inserts the campaign and answers it as saved. With `first` (the instant start), the same statement
   * creates that run when the account can send (accountCanSend, the tick's rule) and saves the campaign
   * moved past it. A new row cannot fail the tick's other conditions.
   */
  async create(c: NewCampaignRow, now: Date, first: FirstRun | null = null): Promise<SavedCampaign> {
    const moved = <T>(run: T, saved: T) => (first ? sql`case when account.can_send then ${run} else ${saved} end` : sql`${saved}`);
    const a = first?.advance;
    const result = await sql<Raw & { first_run_created: boolean }>`
      with account as (
        select coalesce((select ${accountCanSend('a', now)} from accounts a where a.id = ${c.accountId}::uuid), false) as can_send
      ), saved as (
        insert into campaigns as c (id, tenant_id, account_id, name, timezone, schedule, window_start, window_end, messages, targets, target_vars, target_threads, audience_ids,
          active, auto_resume, next_run_at, skipped_count, last_skipped_at, catch_up_through, catch_up_policy, catch_up_max_lateness_seconds, created_at, updated_at)
        select coalesce(${c.id ?? null}::uuid, gen_random_uuid()), ${c.tenantId}::uuid, ${c.accountId}::uuid, ${c.name}, ${c.timezone}, ${JSON.stringify(c.schedule)}::jsonb,
          ${c.windowStart}, ${c.windowEnd}, ${JSON.stringify(c.messages)}::jsonb, ${c.targets}::text[], ${varsJson(c.targetVars)}::jsonb, ${c.targetThreads}::bigint[], ${c.audienceIds}::uuid[],
          ${moved(a?.active, c.active)}::boolean, ${c.autoResume}, ${moved(a?.nextRunAt ?? null, c.nextRunAt)}::timestamptz,
          ${moved(a?.skipped ?? 0, 0)}::bigint, ${moved(a?.lastSkippedAt ?? null, null)}::timestamptz, ${moved(a?.catchUpThrough ?? null, null)}::timestamptz,
          ${c.catchUpPolicy}, ${c.catchUpMaxLatenessSeconds}::int, ${now}, ${now}
        from account
        returning ${COLUMNS}, (select can_send from account) as account_can_send
      )${first ? sql`, ${runInserts([first.run], sql`(select id, targets, target_vars, target_threads, audience_ids from saved where account_can_send)`)}` : sql``}
      select saved.*, ${first ? sql`exists (select 1 from created)` : sql`false`} as first_run_created from saved
    `.execute(this.db);
    const row = result.rows[0]!;
    const asSaved = { active: c.active, nextRunAt: c.nextRunAt, skippedCount: 0, lastSkippedAt: null, catchUpThrough: null };
    return { ...toCampaign(row), ...asSaved, firstRunCreated: row.first_run_created };
  }

  async list(tenantId: string | null, page: ListPage): Promise<CampaignRow[]> {
    const before = page.before ? sql`and (c.created_at, c.id) < (${page.before.at}::timestamptz, ${page.before.id}::uuid)` : sql``;
    const result = await sql<Raw>`
      select ${COLUMNS} from campaigns c
      where c.deleted_at is null and ${scope(tenantId)} ${before}
      order by c.created_at desc, c.id desc
      limit ${page.limit}
    `.execute(this.db);
    return result.rows.map(toCampaign);
  }

  async find(id: string, tenantId: string | null): Promise<CampaignRow | null> {
    const result = await sql<Raw>`
      select ${COLUMNS} from campaigns c where c.id = ${id}::uuid and c.deleted_at is null and ${scope(tenantId)}
    `.execute(this.db);
    const row = result.rows[0];
    return row ? toCampaign(row) : null;
  }

  /** Like find, but locks the row until the transaction ends. */
  async findForUpdate(id: string, tenantId: string | null): Promise<CampaignRow | null> {
    const result = await sql<Raw>`
      select ${COLUMNS} from campaigns c where c.id = ${id}::uuid and c.deleted_at is null and ${scope(tenantId)}
      for update of c
    `.execute(this.db);
    const row = result.rows[0];
    return row ? toCampaign(row) : null;
  }

  async update(id: string, tenantId: string | null, changes: CampaignChanges, now: Date): Promise<CampaignRow | null> {
    const sets = [sql`updated_at = ${now}`];
    if (changes.accountId !== undefined) sets.push(sql`account_id = ${changes.accountId}::uuid`);
    if (changes.name !== undefined) sets.push(sql`name = ${changes.name}`);
    if (changes.timezone !== undefined) sets.push(sql`timezone = ${changes.timezone}`);
    if (changes.schedule !== undefined) sets.push(sql`schedule = ${JSON.stringify(changes.schedule)}::jsonb`);
    if (changes.windowStart !== undefined) sets.push(sql`window_start = ${changes.windowStart}`);
    if (changes.windowEnd !== undefined) sets.push(sql`window_end = ${changes.windowEnd}`);
    if (changes.messages !== undefined) sets.push(sql`messages = ${JSON.stringify(changes.messages)}::jsonb`);
    if (changes.targets !== undefined) sets.push(sql`targets = ${changes.targets}::text[]`);
    if (changes.targetVars !== undefined) sets.push(sql`target_vars = ${varsJson(changes.targetVars)}::jsonb`);
    if (changes.targetThreads !== undefined) sets.push(sql`target_threads = ${changes.targetThreads}::bigint[]`);
    if (changes.audienceIds !== undefined) sets.push(sql`audience_ids = ${changes.audienceIds}::uuid[]`);
    if (changes.active !== undefined) sets.push(sql`active = ${changes.active}`);
    if (changes.autoResume !== undefined) sets.push(sql`auto_resume = ${changes.autoResume}`);
    if (changes.nextRunAt !== undefined) sets.push(sql`next_run_at = ${changes.nextRunAt}`, sql`catch_up_through = null`);
    if (changes.catchUpPolicy !== undefined) sets.push(sql`catch_up_policy = ${changes.catchUpPolicy}`);
    if (changes.catchUpMaxLatenessSeconds !== undefined) sets.push(sql`catch_up_max_lateness_seconds = ${changes.catchUpMaxLatenessSeconds}::int`);
    if (changes.clearAutoPause) sets.push(sql`paused_reason = null`, sql`no_account_streak = 0`);
    if (changes.clearLastError) sets.push(sql`last_error = null`);
    const result = await sql<Raw>`
      update campaigns c set ${sql.join(sets)}
      where c.id = ${id}::uuid and c.deleted_at is null and ${scope(tenantId)}
      returning ${COLUMNS}
    `.execute(this.db);
    const row = result.rows[0];
    return row ? toCampaign(row) : null;
  }

  async softDelete(id: string, tenantId: string | null, now: Date): Promise<boolean> {
    const result = await sql`
      update campaigns c set active = false, deleted_at = ${now}, next_run_at = null, updated_at = ${now}
      where c.id = ${id}::uuid and c.deleted_at is null and ${scope(tenantId)}
    `.execute(this.db);
    return Number(result.numAffectedRows ?? 0) > 0;
  }
}
