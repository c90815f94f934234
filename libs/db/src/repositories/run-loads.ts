import { sql, type Kysely, type Selectable } from 'kysely';
import type { AccountsTable, CampaignsTable, DB, RunsTable } from '../types.js';
import type { RunForSend } from './send-shapes.js';

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
    | 'limits'
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
  a.send_delay_max_seconds, a.hourly_cap, a.daily_cap, a.warmup, a.limits, a.cooling_until, a.cooling_reason,
  a.flood_waits, a.send_outcomes, a.pace_factor, a.pace_since, a.last_cooled_at, a.last_cooling_ms,
  a.typing, a.platform_deduplicates`);

/** Each run of `runIds` with its campaign, account and earliest `dueLimit` pending due times, in the order asked (null: none). */
export async function loadRuns(db: Kysely<DB>, runIds: string[], dueLimit: number): Promise<(RunForSend | null)[]> {
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
    join accounts a on a.id = r.account_id`.execute(db)
  ).rows;
  const byId = new Map(rows.map((row) => [row.id, row]));
  return runIds.map((id) => {
    const row = byId.get(id);
    return row ? toRunForSend(row) : null;
  });
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
      limits: row.limits,
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
