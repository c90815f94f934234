// What a sender's claim statement costs (settleSentAndClaimMany), client and server: N
// statements, one after another on one connection, each for 4 jobs of 4 runs (400 running runs
// of 50 targets, half of them already sent), each job claiming 3 targets and writing the 3 it
// claimed the time before as delivered, as the senders' shared claims do in `throughput`.
//
//   node bench/micro/claim-statement.mjs [N=800]
//
// Reports the client's wall time per statement and PostgreSQL's CPU per statement (every
// `postgres` process on the machine, from /proc: run it on a quiet one), for the build in
// libs/db/dist. The runs and targets are written directly (foreign keys off for that session):
// the statement reads only runs and run_targets.
import { createDb, TargetSendRepository } from '@metronome/db';
import { createScratchDatabase } from '@metronome/testkit';
import pg from 'pg';
import { postgresCpu } from './postgres-cpu.mjs';

// (800 statements claim 9,600 of the 10,000 pending targets)
const N = Math.min(Number(process.argv[2] ?? 800), 800);
const JOBS = 4;
const RUNS = 400;

const scratch = await createScratchDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/metronome', 'claim_cost');
const seed = new pg.Client({ connectionString: scratch.url });
const db = createDb({ url: scratch.url, max: 1, applicationName: 'claim-statement-bench' });
try {
  await seed.connect();
  await seed.query(`set session_replication_role = replica`);
  await seed.query(`insert into runs (id, campaign_id, tenant_id, account_id, trigger, parts, total, scheduled_at, status)
    select gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'schedule', '[]', 50, now(), 'running' from generate_series(1, ${RUNS})`);
  await seed.query(
    `insert into run_targets (run_id, chat_id, status) select r.id, 'c' || lpad(g::text, 4, '0'), case when g <= 25 then 'sent' else 'pending' end from runs r, generate_series(1, 50) g`,
  );
  const runs = (await seed.query(`select id from runs order by id`)).rows.map((r) => r.id);
  const targets = new TargetSendRepository(db);
  const held = new Map();
  const round = async (i) => {
    const jobs = Array.from({ length: JOBS }, (_, k) => runs[(i * JOBS + k) % runs.length]);
    const now = new Date();
    const requests = jobs.map((runId) => ({
      runId,
      owner: `job-${runId}`,
      sent: (held.get(runId) ?? []).map((chatId) => ({ chatId, at: now, latencyMs: 3, partsSent: 1, messageId: `m-${chatId}` })),
      leaseUntil: new Date(now.getTime() + 60_000),
      firstSendKnown: true,
      limit: 3,
    }));
    const results = await targets.settleSentAndClaimMany(requests, now, true);
    results.forEach((r, k) =>
      held.set(
        jobs[k],
        r.claimed.map((t) => t.chatId),
      ),
    );
  };
  // warm: the connection prepares the statement, V8 compiles the path
  for (let i = 0; i < 50; i++) await round(i);
  await seed.query(`update run_targets set status = case when chat_id <= 'c0025' then 'sent' else 'pending' end, lease_owner = null, lease_expires_at = null`);
  held.clear();
  const cpu0 = postgresCpu();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await round(i);
  const wallMs = performance.now() - t0;
  const pgMs = (postgresCpu() - cpu0) * 1000;
  console.log(
    JSON.stringify({
      statements: N,
      jobsPerStatement: JOBS,
      'client ms/statement': +(wallMs / N).toFixed(3),
      'PostgreSQL CPU ms/statement': +(pgMs / N).toFixed(3),
    }),
  );
} finally {
  await db.destroy();
  await seed.end();
  await scratch.drop();
}
