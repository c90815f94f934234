// What a run's start statement (RunRepository.markRunningMany) costs PostgreSQL: batches of 1–3
// queued runs of 5 chats (as `start-lag` starts them), through a named statement as the senders
// send it, on a clone of the tests' template with 20,000 finished runs beside them.
//
//   node bench/micro/run-start.mjs [N=3000] [--explain]
//
// Prints the statement's round trip and PostgreSQL's CPU per call (every `postgres` process:
// run it on a quiet machine); --explain prints the last call's plan (auto_explain, with
// buffers and timing) instead of measuring.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { prepareStatements, RunRepository } from '@metronome/db';
import { createScratchDatabase } from '@metronome/testkit';
import { fillHistory, seedHistoryOwners } from '../scenarios/history-fill.mjs';
import { postgresCpu } from './postgres-cpu.mjs';

const N = Number(process.argv[2] ?? 3000);
const explain = process.argv.includes('--explain');
const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const db = await createScratchDatabase(base, 'run_start');
try {
  const tenants = await seedHistoryOwners(db.url, { targetsPerRun: 5, tenants: 10, accountsPerTenant: 10 });
  // NO_STATISTICS=1: no history and no ANALYZE, as on a server whose autovacuum is off
  const analysed = !process.env.NO_STATISTICS;
  if (analysed) await fillHistory(db.url, tenants, { runs: 20_000 });
  const url = new URL(db.url);
  // PLAN_CACHE_MODE=force_generic_plan|force_custom_plan: the start under another plan choice
  if (process.env.PLAN_CACHE_MODE) url.searchParams.set('options', `-c plan_cache_mode=${process.env.PLAN_CACHE_MODE}`);
  if (explain)
    url.searchParams.set(
      'options',
      '-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 -c auto_explain.log_analyze=on -c auto_explain.log_buffers=on -c auto_explain.log_level=notice -c auto_explain.log_nested_statements=on',
    );
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  const notices = [];
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    prepareStatements(client);
    client.on('notice', (n) => notices.push(n.message));
  });
  const kysely = new Kysely({ dialect: new PostgresDialect({ pool }) });
  const runs = new RunRepository(kysely);
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  // queued runs of the history's campaigns, 5 pending chats each, made ahead of the measured calls
  const queued = (
    await admin.query(
      `with c as (
         -- a campaign of its own for each (one open run a campaign), on the history's accounts
         insert into campaigns (tenant_id, account_id, name, timezone, schedule, messages, targets, active)
         select o.tenant_id, o.account_id, 'queued', o.timezone, o.schedule, o.messages, o.targets, false
           from generate_series(1, $1) i join lateral (select * from campaigns where name = 'history' order by id offset i % 100 limit 1) o on true
         returning id, tenant_id, account_id
       ), r as (
         insert into runs (campaign_id, tenant_id, account_id, trigger, status, parts, total, scheduled_at, job_id, job_seq, created_at, updated_at)
         select c.id, c.tenant_id, c.account_id, 'schedule', 'queued', '[{"type":"text","text":"hello"}]', 5, now(), 'job', 0, now(), now()
           from c
         returning id
       ), t as (
         insert into run_targets (run_id, chat_id, status, next_attempt_at, updated_at)
         select r.id, 'chat-' || k, 'pending', now(), now() from r, generate_series(1, 5) k
       ) select id from r`,
      [N * 2 + 100],
    )
  ).rows.map((r) => r.id);
  if (analysed) await admin.query('vacuum analyze');
  let at = 0;
  const batch = () => {
    const size = 1 + (at % 3);
    const ids = queued.slice(at, at + size);
    at += size;
    return ids.map((runId) => ({ runId, at: new Date() }));
  };
  // prepared and past PostgreSQL's five custom plans on each connection
  for (let i = 0; i < 40; i++) await runs.markRunningMany(batch(), new Date());
  if (explain) {
    notices.length = 0;
    await runs.markRunningMany(batch(), new Date());
    console.log(notices.join('\n'));
  } else {
    const pg0 = postgresCpu();
    const t0 = performance.now();
    let calls = 0;
    while (at < N) {
      await runs.markRunningMany(batch(), new Date());
      calls++;
    }
    const ms = (performance.now() - t0) / calls;
    console.log(`${calls} starts: ${ms.toFixed(3)} ms a round trip, PostgreSQL ${(((postgresCpu() - pg0) * 1000) / calls).toFixed(3)} ms CPU a call`);
  }
  await admin.end();
  await kysely.destroy();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await db.drop();
}
