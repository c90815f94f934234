import pg from 'pg';

// A long history, written as Metronome's own write paths leave it, in SQL for speed: finished
// runs (success mostly; some partial, failed, cancelled) of interval campaigns, each with its
// targets (sent once, a message id, a latency; the rest failed or skipped with a code) and the
// three events its status changes write (queued, running, its end). Runs spread evenly over
// `days` up to now. Triggers are off while it writes (session_replication_role = replica):
// the events a trigger would write are written here, and no webhook subscribes.

/** The history's span and each run's chats, unless told otherwise. */
export const HISTORY_DAYS = 400;
export const HISTORY_TARGETS_PER_RUN = 20;

/**
 * The owners of the history: `tenants` tenants of `accountsPerTenant` http accounts with one
 * campaign of `targetsPerRun` chats each (inactive: never due). Returns the tenants' ids, the
 * first one's first.
 */
export async function seedHistoryOwners(
  databaseUrl,
  { targetsPerRun = HISTORY_TARGETS_PER_RUN, tenants = 100, accountsPerTenant = 10, firstTokenHash = null } = {},
) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // the first tenant's token is one the benchmark knows (`firstTokenHash`), so it can list its history
    const tenantIds = (
      await client.query(
        `insert into tenants (name, token_hash, created_at) select 'history-' || i, case when i = 1 and $2::text is not null then $2 else md5(random()::text) end, now() - make_interval(secs => $1 - i)
           from generate_series(1, $1) i returning id`,
        [tenants, firstTokenHash],
      )
    ).rows.map((r) => r.id);
    // one http account and one interval campaign per account, not due (inactive): history only
    await client.query(
      `insert into accounts (tenant_id, platform, name, external_id, credentials, max_send_per_minute, group_concurrency)
       select t, 'http', 'history', 'history-' || t || '-' || a, null, null, null from unnest($1::uuid[]) t, generate_series(1, $2) a`,
      [tenantIds, accountsPerTenant],
    );
    await client.query(
      `insert into campaigns (tenant_id, account_id, name, timezone, schedule, messages, targets, active)
       select a.tenant_id, a.id, 'history', 'UTC', '{"type":"interval","everySeconds":3600}', '[{"type":"text","text":"hello {{name}}"}]',
              array(select 'h-' || left(a.id::text, 8) || '-' || k from generate_series(1, $2) k), false
         from accounts a where a.tenant_id = any($1::uuid[]) and a.external_id like 'history-%'`,
      [tenantIds, targetsPerRun],
    );
    return tenantIds;
  } finally {
    await client.end();
  }
}

/**
 * Writes `runs` finished runs of the owners' campaigns (seedHistoryOwners) over `days` up to
 * now, then VACUUM ANALYZE. Progress to `log`.
 */
export async function fillHistory(databaseUrl, tenantIds, { runs, days = HISTORY_DAYS, batch = 20_000, log = () => {} }) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`set session_replication_role = replica`);
    const started = Date.now();
    const spanMs = days * 86_400_000;
    const now = Date.now();
    for (let from = 0; from < runs; from += batch) {
      const n = Math.min(batch, runs - from);
      // run i of the whole history: campaign i % campaigns, scheduled (i / runs) of the way from `days` ago to now
      await client.query(
        `with c as (select id, tenant_id, account_id, targets, row_number() over (order by id) - 1 as k, count(*) over () as n from campaigns where name = 'history' and tenant_id = any($5::uuid[])),
         r as (
           select gen_random_uuid() as id, c.id as campaign_id, c.tenant_id, c.account_id, c.targets,
                  to_timestamp(($3::float8 - $4::float8 + ($1::float8 + i) * $4::float8 / $2::float8) / 1000) as at,
                  case when i % 50 = 0 then 'partial' when i % 199 = 0 then 'failed' when i % 397 = 0 then 'cancelled' else 'success' end as status
             from generate_series(0, $6 - 1) i join c on c.k = ($1 + i) % c.n
         ), runs_in as (
           insert into runs (id, campaign_id, tenant_id, account_id, trigger, status, parts, total, scheduled_at, started_at, first_send_at, finished_at, error_summary, job_id, job_seq, created_at, updated_at)
           select id, campaign_id, tenant_id, account_id, 'schedule', status, '[{"type":"text","text":"hello {{name}}"}]', cardinality(targets), at, at + interval '20 ms', at + interval '40 ms', at + interval '2 s',
                  case when status = 'success' then null else 'a chat failed: chat_not_found' end, 'run:' || id || ':0', 0, at - interval '1 s', at + interval '2 s'
             from r returning id
         ), targets_in as (
           insert into run_targets (run_id, chat_id, status, attempts, parts_sent, next_attempt_at, sent_at, latency_ms, error_code, error_message, message_ids, updated_at, send_started_at)
           select r.id, chat, s.status, 1, case when s.status = 'sent' then 1 else 0 end, r.at,
                  case when s.status = 'sent' then r.at + interval '1 s' end, case when s.status = 'sent' then 35 end,
                  case when s.status = 'failed' then 'chat_not_found' when s.status = 'skipped' then 'cancelled' end,
                  case when s.status = 'failed' then 'the platform does not know this chat' when s.status = 'skipped' then 'the run was cancelled' end,
                  case when s.status = 'sent' then array['msg-' || md5(r.id::text || chat)] else '{}' end, r.at + interval '1 s', r.at + interval '900 ms'
             from r, unnest(r.targets) with ordinality as t(chat, k),
                  lateral (select case when r.status in ('partial', 'failed') and k = 1 then 'failed' when r.status = 'failed' then 'failed'
                                       when r.status = 'cancelled' and k > 10 then 'skipped' else 'sent' end as status) s
         )
         insert into run_events (run_id, tenant_id, status, created_at)
         select r.id, r.tenant_id, e.status, r.at + e.offs
           from r, lateral (values ('queued', interval '-1 s'), ('running', interval '20 ms'), (r.status, interval '2 s')) e(status, offs)`,
        [from, runs, now, spanMs, tenantIds, n],
      );
      const done = from + n;
      if (done === runs || done % (batch * 10) === 0)
        log(`history: ${done.toLocaleString('en-US')} of ${runs.toLocaleString('en-US')} runs written (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    }
    await client.query(`set session_replication_role = origin`);
    await client.query(`vacuum analyze`);
    return { seconds: (Date.now() - started) / 1000 };
  } finally {
    await client.end();
  }
}

/**
 * The bytes each history table holds with its indexes and TOAST, and its rows (counted: the
 * planner's estimate lags after a sweep's deletes).
 */
export async function historyBytes(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const out = {};
    for (const table of ['runs', 'run_targets', 'run_events']) {
      const { rows, bytes } = (await client.query(`select count(*)::bigint as rows, pg_total_relation_size('${table}')::bigint as bytes from ${table}`))
        .rows[0];
      out[table] = { bytes: Number(bytes), rows: Number(rows) };
    }
    return out;
  } finally {
    await client.end();
  }
}
