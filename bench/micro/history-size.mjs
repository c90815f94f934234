// How big the history is, and what its retention costs: RUNS finished runs of 20 chats with
// three status events each (the rows the scheduler and the senders write), spread over 40
// days, in a scratch database. Prints bytes per run, target and event (pg_total_relation_size:
// table, indexes and TOAST), then the retention sweep over the half older than 20 days
// (rows, seconds, slowest statement), and for comparison the same targets in a table
// partitioned by day, whose older half goes as one dropped partition.
//
//   npm run build && node bench/micro/history-size.mjs
import pg from 'pg';
import { createScratchDatabase } from '@metronome/testkit';
import { createDb, ErasureRepository, RetentionRepository } from '../../libs/db/dist/index.js';
import { retentionSweep } from '../../services/scheduler/dist/retention-sweep.js';

const RUNS = 20_000;
const GENERATE = `
-- a modest history written as the project writes it: runs of 20 chats, 3 status events each
insert into tenants (id, name, token_hash) values ('00000000-0000-0000-0000-0000000000a1', 'gen', 'gen-hash') on conflict do nothing;
insert into accounts (id, tenant_id, platform, name, external_id) values ('00000000-0000-0000-0000-0000000000b1', '00000000-0000-0000-0000-0000000000a1', 'http', 'a', 'gen-a') on conflict do nothing;
insert into campaigns (id, tenant_id, account_id, name, timezone, schedule, messages, targets)
select ('00000000-0000-0000-0000-' || lpad(to_hex(g), 12, '0'))::uuid, '00000000-0000-0000-0000-0000000000a1', '00000000-0000-0000-0000-0000000000b1', 'c' || g, 'UTC',
  '{"type":"interval","everySeconds":600}', '[{"type":"text","text":"Hello, this is the weekly reminder"}]', array(select 'chat-' || i from generate_series(1, 20) i)
from generate_series(1, 50) g on conflict do nothing;
-- RUNS runs over 40 days; the trigger writes each its first status event
insert into runs (campaign_id, tenant_id, account_id, trigger, status, parts, total, scheduled_at, started_at, first_send_at, finished_at, job_id, created_at, updated_at)
select ('00000000-0000-0000-0000-' || lpad(to_hex(1 + g % 50), 12, '0'))::uuid, '00000000-0000-0000-0000-0000000000a1', '00000000-0000-0000-0000-0000000000b1', 'schedule', 'success',
  '[{"type":"text","text":"Hello, this is the weekly reminder"}]', 20, t, t, t + interval '1 s', t + interval '30 s', 'run-' || g || '-0', t, t
from (select g, now() - interval '40 days' + g * (40.0 * 86400 / ${RUNS}) * interval '1 second' as t from generate_series(1, ${RUNS}) g) x;
-- two more events per run (queued, running), as a run that went to success has three
insert into run_events (run_id, tenant_id, status, created_at)
select r.id, r.tenant_id, s, r.created_at from runs r cross join unnest(array['queued', 'running']) s where r.tenant_id = '00000000-0000-0000-0000-0000000000a1';
insert into run_targets (run_id, chat_id, status, attempts, parts_sent, sent_at, latency_ms, message_ids, updated_at)
select r.id, 'chat-' || i, 'sent', 1, 1, r.started_at + i * interval '1 s', 120, array['msg-' || substr(md5(r.id::text || i), 1, 20)], r.started_at + i * interval '1 s'
from runs r cross join generate_series(1, 20) i where r.tenant_id = '00000000-0000-0000-0000-0000000000a1';
`;

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/metronome';
const scratch = await createScratchDatabase(databaseUrl, 'history_size');
const client = new pg.Client({ connectionString: scratch.url });
await client.connect();
try {
  await client.query(GENERATE);
  await client.query('vacuum analyze runs, run_targets, run_events');
  const sizes = await client.query(`
    select relname, n, pg_total_relation_size(relname::regclass)::bigint as bytes
      from (select 'runs' relname, (select count(*) from runs) n union all select 'run_targets', (select count(*) from run_targets)
            union all select 'run_events', (select count(*) from run_events)) x`);
  const perRow = Object.fromEntries(sizes.rows.map((r) => [r.relname, Math.round(Number(r.bytes) / Number(r.n))]));
  console.log(JSON.stringify({ rows: Object.fromEntries(sizes.rows.map((r) => [r.relname, Number(r.n)])), bytesPerRow: perRow }));

  // the alternative, for later: the same targets partitioned by day, the older half one partition
  await client.query(`create table pt (like run_targets including defaults, day date not null) partition by range (day);
    create table pt_old partition of pt for values from ('2000-01-01') to ((now() - interval '20 days')::date);
    create table pt_new partition of pt for values from ((now() - interval '20 days')::date) to ('2100-01-01');
    alter table pt add primary key (run_id, chat_id, day);
    insert into pt select t.*, r.created_at::date from runs r join run_targets t on t.run_id = r.id;`);
  const db = createDb({ url: scratch.url, max: 2, applicationName: 'history-size' });
  const retention = new RetentionRepository(db);
  let slowest = 0;
  const timed = new Proxy(retention, {
    get: (target, key) =>
      typeof target[key] === 'function'
        ? async (...args) => {
            const started = performance.now();
            try {
              return await target[key](...args);
            } finally {
              slowest = Math.max(slowest, performance.now() - started);
            }
          }
        : target[key],
  });
  const counts = {};
  const started = performance.now();
  await retentionSweep({
    retention: timed,
    erasure: new ErasureRepository(db),
    clock: { now: () => Date.now() },
    policy: { historyMs: 20 * 86_400_000, summaryMs: 400 * 86_400_000 },
    batch: 1000,
    pauseMs: 0,
    keepGoing: () => true,
    counted: (kind, n) => (counts[kind] = (counts[kind] ?? 0) + n),
  });
  console.log(
    JSON.stringify({ sweep: { deleted: counts, seconds: +((performance.now() - started) / 1000).toFixed(1), slowestStatementMs: +slowest.toFixed(1) } }),
  );
  await db.destroy();

  const old = (await client.query('select count(*)::int as n from pt_old')).rows[0].n;
  const dropStarted = performance.now();
  await client.query('begin; alter table pt detach partition pt_old; drop table pt_old; commit;');
  console.log(
    JSON.stringify({ partitionDrop: { rows: old, ms: +(performance.now() - dropStarted).toFixed(1), lock: 'ACCESS EXCLUSIVE on pt while it runs' } }),
  );
} finally {
  await client.end();
  await scratch.drop();
}
