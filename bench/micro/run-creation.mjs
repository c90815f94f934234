// What the run-creation statement (libs/db run-creation.ts, the scheduler tick's and the API's)
// costs with audiences: the wall time of one insertRuns statement for
//   - 500 runs of 10 inline targets each (a full tick of small campaigns),
//   - the same 500 and one run of a 10,000-member audience,
//   - one run of a 10,000-member audience alone, and one of 10,000 inline targets (the most a
//     campaign's targets take) for comparison.
// Each case R rounds (the runs of a round are finished before the next, as the tick would find
// them), on one connection, for the build in libs/db/dist.
//
//   node bench/micro/run-creation.mjs [R=5]
import { randomUUID } from 'node:crypto';
import { createDb, insertRuns } from '@metronome/db';
import { createScratchDatabase } from '@metronome/testkit';
import pg from 'pg';

const R = Number(process.argv[2] ?? 5);
const scratch = await createScratchDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/metronome', 'run_creation');
const seed = new pg.Client({ connectionString: scratch.url });
const db = createDb({ url: scratch.url, max: 1, applicationName: 'run-creation-bench' });
try {
  await seed.connect();
  const tenant = (await seed.query(`insert into tenants (name, token_hash) values ('bench', 'x') returning id`)).rows[0].id;
  const account = (
    await seed.query(`insert into accounts (tenant_id, platform, name, external_id, credentials) values ($1, 'http', 'a', 'bench-a', '\\x00') returning id`, [
      tenant,
    ])
  ).rows[0].id;
  const campaign = async (targets, audienceIds = []) =>
    (
      await seed.query(
        `insert into campaigns (tenant_id, account_id, name, timezone, schedule, messages, targets, audience_ids)
         values ($1, $2, 'c', 'UTC', '{"type":"interval","everySeconds":60}', '[{"type":"text","text":"hi"}]', $3, $4) returning id`,
        [tenant, account, targets, audienceIds],
      )
    ).rows[0].id;
  const smallCampaigns = async () => {
    const ids = [];
    for (let i = 0; i < 500; i++) ids.push(await campaign(Array.from({ length: 10 }, (_, k) => `c${i}-${k}`)));
    return ids;
  };
  const audience = (await seed.query(`insert into audiences (tenant_id, name, member_count) values ($1, 'big', 10000) returning id`, [tenant])).rows[0].id;
  await seed.query(
    `insert into audience_members (audience_id, chat_id, vars, search) select $1, 'm-' || g, jsonb_build_object('name', 'Member ' || g), 'm-' || g from generate_series(1, 10000) g`,
    [audience],
  );
  // each case its own campaigns: the per-chat gate reads a campaign's earlier runs
  const cases = {
    '500 runs × 10 inline': await smallCampaigns(),
    '500 × 10 inline + 1 × 10,000-member audience': [...(await smallCampaigns()), await campaign([], [audience])],
    '1 × 10,000-member audience': [await campaign([], [audience])],
    '1 × 10,000 inline targets': [await campaign(Array.from({ length: 10_000 }, (_, k) => `t-${k}`))],
  };
  await seed.query('analyze');

  let at = Date.now();
  const runsFor = (ids) => {
    at += 60_000;
    return ids.map((campaignId) => {
      const id = randomUUID();
      return {
        id,
        campaignId,
        tenantId: tenant,
        accountId: account,
        trigger: 'schedule',
        parts: [{ type: 'text', text: 'hi' }],
        scheduledAt: new Date(at),
        windowEndAt: null,
        jobId: `run-${id}-0`,
      };
    });
  };
  const time = async (ids) => {
    const samples = [];
    for (let r = 0; r < R + 1; r++) {
      const runs = runsFor(ids);
      const t0 = performance.now();
      const created = await insertRuns(db, runs);
      const ms = performance.now() - t0;
      if (created.length !== ids.length) throw new Error(`${created.length} of ${ids.length} runs created`);
      await seed.query(`update runs set status = 'success', finished_at = now() where status = 'queued'`);
      if (r > 0) samples.push(ms); // the first round warms the connection and the plan
    }
    samples.sort((a, b) => a - b);
    return +samples[Math.floor(samples.length / 2)].toFixed(1);
  };
  const figures = { rounds: R };
  for (const [name, ids] of Object.entries(cases)) figures[`median ms: ${name}`] = await time(ids);
  console.log(JSON.stringify(figures));
} finally {
  await db.destroy();
  await seed.end();
  await scratch.drop();
}
