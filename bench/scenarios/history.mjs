import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { createScratchDatabase, scrapeSum, startStack } from '@metronome/testkit';
import { call, createAccounts, sendersCpu } from './common.mjs';
import { fillHistory, historyBytes, seedHistoryOwners } from './history-fill.mjs';
import { pacedLoad } from './paced-load.mjs';
import { phase } from './throughput.mjs';
import { cpuSeconds } from '../probe-process.mjs';

// Two databases, the same stack on each in turn (empty, history, empty, history), so the load
// of the machine weighs on both alike: one empty, one holding a long history (history-fill.mjs:
// 1,000,000 finished runs of 20 chats, 20 million targets, 3 million events, over 400 days;
// BENCH_HISTORY_RUNS changes the size). Each turn measures sending throughput (after a cold
// phase), every list and page the API and the console's Activity page ask for, and the
// scheduler's tick. A statement that reads history it does not return shows as a ratio
// above 1. The filled database is kept as a template (`metronome_bench_history_<runs>_<hash of
// migrations>`) and cloned: filling it takes about half an hour on this machine.
//
// Retention is set past the history (KEEP_ALL): with the default 90 days the scheduler's sweep
// began deleting three quarters of the history as the stack started, so the history turns
// measured the lists and the sends beside a sweep of millions of rows, not over a long
// history. The sweep beside sending is measured on its own (history-sweep.mjs).
//
// The empty database holds one page of history (ONE_PAGE runs of the history tenant: 51 of each
// of its campaigns and accounts), so every list answers the same full page on both databases:
// against an empty answer the tenant, campaign and account lists compared a page of 50 runs
// with their counts to no run at all (8 against 80 ms p99 at load 8), which is the answer's
// size, not the history's.
const RATE = 20;
const ONE_PAGE = 510;
export const KEEP_ALL = { HISTORY_RETENTION: '3650d', RUN_SUMMARY_RETENTION: '3650d' };
const SECONDS = 10;
const HISTORY_TOKEN = 'mtr_historybenchmarktenanttoken00000';
export const HISTORY_TOKEN_HASH = createHash('sha256').update(HISTORY_TOKEN).digest('hex');

export async function history(env) {
  const runs = env.quick ? 20_000 : Number(process.env.BENCH_HISTORY_RUNS ?? 1_000_000);
  // accounts of 50 chats in the measured pass: a pass of a few seconds is mostly its start and
  // its last runs' tail, and moved widely from turn to turn (bench/results/HISTORY.md)
  const accountsPerPass = env.quick ? 20 : Number(process.env.BENCH_HISTORY_ACCOUNTS ?? 400);
  const empty = await createScratchDatabase(env.databaseUrl, 'history_empty');
  const template = await filledTemplate(env.databaseUrl, runs, HISTORY_TOKEN_HASH);
  const full = await createScratchDatabase(env.databaseUrl, 'history_full', template);
  try {
    const [historyTenant] = await seedHistoryOwners(empty.url, { firstTokenHash: HISTORY_TOKEN_HASH });
    await fillHistory(empty.url, [historyTenant], { runs: ONE_PAGE });
    await setToken(full.url, HISTORY_TOKEN_HASH);
    const turns = [];
    // BENCH_HISTORY_ROUNDS pairs of turns (2 by default): a turn's short sending pass moves by
    // up to 2× from one turn to the next on the same database
    const rounds = Number(process.env.BENCH_HISTORY_ROUNDS ?? 2);
    const order = Array.from({ length: rounds }, () => [
      ['empty', empty],
      ['history', full],
    ]).flat();
    for (const [label, db] of order) {
      process.stdout.write(`  ${label}…\n`);
      turns.push({ label, ...(await turn(env, db, accountsPerPass, turns.length)) });
    }
    const of = (label) => turns.filter((t) => t.label === label);
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const figures = {
      'history runs': runs,
      'sends/s empty': of('empty')
        .map((t) => Math.round(t.sendsPerSecond))
        .join(' · '),
      'sends/s with history': of('history')
        .map((t) => Math.round(t.sendsPerSecond))
        .join(' · '),
      'sends/s ratio (goal ≥ 0.9)': mean(of('history').map((t) => t.sendsPerSecond)) / mean(of('empty').map((t) => t.sendsPerSecond)),
      'PostgreSQL backend CPU ms/send empty': mean(of('empty').map((t) => t.postgres.backendCpuMsPerSend)),
      'PostgreSQL backend CPU ms/send with history': mean(of('history').map((t) => t.postgres.backendCpuMsPerSend)),
      'blocks read outside shared buffers per send empty': mean(of('empty').map((t) => t.postgres.blocksReadPerSend)),
      'blocks read outside shared buffers per send with history': mean(of('history').map((t) => t.postgres.blocksReadPerSend)),
      'scheduler tick mean ms empty': mean(of('empty').map((t) => t.tickMs)),
      'scheduler tick mean ms with history': mean(of('history').map((t) => t.tickMs)),
    };
    const ratios = [];
    for (const name of Object.keys(turns[0].p99)) {
      // the better of each database's two turns: a turn's p99 over 200 requests is one slow moment's
      const best = (label) => Math.min(...of(label).map((t) => t.p99[name]));
      figures[`${name} p99 ms empty`] = best('empty');
      figures[`${name} p99 ms with history`] = best('history');
      ratios.push({ name, ratio: best('history') / Math.max(best('empty'), 1), ms: best('history') });
    }
    const worst = ratios.reduce((a, b) => (b.ratio > a.ratio ? b : a));
    figures['worst list p99 ratio (goal ≤ 2)'] = `${worst.ratio.toFixed(2)} (${worst.name})`;
    figures['worst list p99 ms with history (goal ≤ 50)'] = Math.max(...ratios.map((r) => r.ms));
    // the medians beside: a p99 of 200 requests is the second slowest, one slow moment of the machine
    const medians = Object.keys(turns[0].p50).map((name) => {
      const best = (label) => Math.min(...of(label).map((t) => t.p50[name]));
      return { name, ratio: best('history') / Math.max(best('empty'), 1), ms: best('history') };
    });
    const worstMedian = medians.reduce((a, b) => (b.ratio > a.ratio ? b : a));
    figures['worst list p50 ratio'] = `${worstMedian.ratio.toFixed(2)} (${worstMedian.name})`;
    figures['worst list p50 ms with history'] = Math.max(...medians.map((r) => r.ms));
    const bytes = await historyBytes(full.url);
    for (const [table, { bytes: b, rows }] of Object.entries(bytes)) figures[`${table} bytes per row`] = Math.round(b / Math.max(rows, 1));
    return {
      params: { runs, emptyHolds: ONE_PAGE, targetsPerRun: 20, days: 400, accountsPerPass, rate: RATE, seconds: SECONDS, turns: turns.map((t) => t.label) },
      figures,
      turns,
      bytes,
    };
  } finally {
    await empty.drop();
    await full.drop();
  }
}

/** One turn: the stack started on `db`, a cold phase, a measured pass, the lists and the tick. */
async function turn(env, db, accountsPerPass, n) {
  const keyPrefix = `bench-${randomBytes(4).toString('hex')}`;
  const stack = await startStack({
    databaseUrl: db.url,
    redisUrl: env.redisUrl,
    keyPrefix,
    senders: 2,
    senderEnv: { SENDER_CONCURRENCY: '32' },
    apiEnv: { API_RATE_LIMIT_PER_MINUTE: '1000000' },
    schedulerEnv: KEEP_ALL,
  });
  try {
    const { token } = await call(stack, 'POST', '/v1/tenants', stack.adminToken, { name: `bench-${n}` });
    const accounts = await createAccounts(stack, token, 40 + accountsPerPass, { maxSendPerMinute: 60_000, groupConcurrency: 10 }, `acc${n}`);
    const cpu = () => sendersCpu(stack);
    await phase(stack, token, accounts.slice(0, 40), `w${n}-`, cpu);
    const database = await databaseProbe(db.url);
    const sending = await phase(stack, token, accounts.slice(40), `p${n}-`, cpu);
    const postgres = await database.delta(sending.sends);
    const run = sending.runs[0];
    const owner = await historyOwner(db.url);
    const deep = await cursorAfterPages(stack, stack.adminToken, '/v1/runs?limit=20', 3);
    const lists = {
      'admin all runs (Activity)': ['/v1/runs?limit=50', stack.adminToken],
      'admin status=success': ['/v1/runs?limit=50&status=success', stack.adminToken],
      'admin status=failed': ['/v1/runs?limit=50&status=failed', stack.adminToken],
      'admin 4th page': [`/v1/runs?limit=50&cursor=${encodeURIComponent(deep)}`, stack.adminToken],
      'tenant runs': ['/v1/runs?limit=50', HISTORY_TOKEN],
      'tenant status=partial': ['/v1/runs?limit=50&status=partial', HISTORY_TOKEN],
      'campaign runs': [`/v1/runs?limit=50&campaignId=${owner.campaignId}`, HISTORY_TOKEN],
      'account runs': [`/v1/runs?limit=50&accountId=${owner.accountId}`, HISTORY_TOKEN],
      'one run': [`/v1/runs/${run.id}`, token],
      "one run's targets": [`/v1/runs/${run.id}/targets?limit=100`, token],
      'tenants (admin Activity)': ['/v1/tenants?limit=500', stack.adminToken],
    };
    const [p50, p99] = [{}, {}];
    for (const [name, [path, bearer]] of Object.entries(lists)) {
      const r = await pacedLoad({ baseUrl: stack.apiUrl, path: () => path, rate: RATE, seconds: SECONDS, headers: { authorization: `Bearer ${bearer}` } });
      const bad = Object.entries(r.statuses).filter(([s]) => s !== '200');
      if (bad.length) throw new Error(`${name}: answers ${JSON.stringify(r.statuses)}`);
      [p50[name], p99[name]] = [r.p50, r.p99];
    }
    return { sendsPerSecond: sending.sendsPerSecond, cpuMsPerSend: sending.cpuMsPerSend, postgres, p50, p99, tickMs: await meanTickMs(stack, 20_000) };
  } finally {
    await stack.stop().catch((e) => console.error(e.message));
  }
}

/**
 * What the measured pass cost the turn's database: the CPU of its backends (those connected
 * when the pass began: the services' pools) and the blocks its statements read from outside
 * PostgreSQL's shared buffers or found in them, per send.
 */
async function databaseProbe(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const read = async () => {
    const pids = (await client.query('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()')).rows.map((r) => r.pid);
    const cpu = new Map();
    for (const pid of pids) {
      try {
        cpu.set(pid, cpuSeconds(pid));
      } catch {
        // a backend gone meanwhile
      }
    }
    const [blocks] = (await client.query('select blks_read::bigint as read, blks_hit::bigint as hit from pg_stat_database where datname = current_database()'))
      .rows;
    // each table's blocks touched (read or found), heap and indexes apart
    const tables = Object.fromEntries(
      (
        await client.query(
          `select relname, coalesce(heap_blks_read + heap_blks_hit, 0)::bigint as heap, coalesce(idx_blks_read + idx_blks_hit, 0)::bigint as idx from pg_statio_user_tables`,
        )
      ).rows.map((r) => [r.relname, { heap: Number(r.heap), idx: Number(r.idx) }]),
    );
    return { cpu, read: Number(blocks.read), hit: Number(blocks.hit), tables };
  };
  const before = await read();
  return {
    delta: async (sends) => {
      // the statistics collector reports a backend's counts at its transaction's end, at most every 500 ms
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const after = await read();
      await client.end();
      let cpu = 0;
      for (const [pid, s] of before.cpu) if (after.cpu.has(pid)) cpu += after.cpu.get(pid) - s;
      const perSend = (n) => +(n / sends).toFixed(2);
      const tables = Object.entries(after.tables)
        .map(([name, t]) => ({ name, heap: perSend(t.heap - (before.tables[name]?.heap ?? 0)), idx: perSend(t.idx - (before.tables[name]?.idx ?? 0)) }))
        .filter((t) => t.heap + t.idx >= 0.5)
        .sort((a, b) => b.heap + b.idx - (a.heap + a.idx));
      return {
        tablesBlocksPerSend: tables,
        backendCpuMsPerSend: +((cpu * 1000) / sends).toFixed(3),
        blocksReadPerSend: +((after.read - before.read) / sends).toFixed(2),
        blocksHitPerSend: +((after.hit - before.hit) / sends).toFixed(2),
      };
    },
  };
}

/** The filled template for `runs`, made once (and kept) for these migrations. */
export async function filledTemplate(databaseUrl, runs, tokenHash) {
  const { readdirSync, readFileSync } = await import('node:fs');
  const { MIGRATIONS_DIR } = await import('@metronome/db');
  const hash = createHash('sha256');
  for (const f of readdirSync(MIGRATIONS_DIR).sort()) hash.update(f).update(readFileSync(`${MIGRATIONS_DIR}/${f}`));
  const name = `metronome_bench_history_${runs}_${hash.digest('hex').slice(0, 10)}`;
  const admin = new pg.Client({ connectionString: Object.assign(new URL(databaseUrl), { pathname: '/postgres' }).toString() });
  await admin.connect();
  try {
    if ((await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount) return name;
    const scratch = await createScratchDatabase(databaseUrl, 'history_fill');
    const owners = await seedHistoryOwners(scratch.url, { firstTokenHash: tokenHash });
    await fillHistory(scratch.url, owners, { runs, log: (line) => process.stdout.write(`  ${line}\n`) });
    await admin.query(`alter database "${scratch.name}" rename to "${name}"`);
    return name;
  } finally {
    await admin.end();
  }
}

/** The history tenant opens with HISTORY_TOKEN (a template filled before a change of it too). */
export async function setToken(databaseUrl, tokenHash) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`update tenants set token_hash = $1 where name = 'history-1'`, [tokenHash]);
  } finally {
    await client.end();
  }
}

/** The history tenant's first campaign and its account. */
async function historyOwner(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const row = (
      await client.query(`select c.id, c.account_id from campaigns c join tenants t on t.id = c.tenant_id where t.name = 'history-1' order by c.id limit 1`)
    ).rows[0];
    return { campaignId: row.id, accountId: row.account_id };
  } finally {
    await client.end();
  }
}

/** The cursor `pages` pages into a list, as "load more" clicked that many times would send. */
async function cursorAfterPages(stack, bearer, path, pages) {
  let cursor = null;
  for (let i = 0; i < pages; i++) {
    const page = await call(stack, 'GET', `${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, bearer);
    cursor = page.nextCursor ?? cursor;
  }
  return cursor;
}

/** The scheduler's mean tick over `ms`, from its own histogram. */
async function meanTickMs(stack, ms) {
  const url = `http://127.0.0.1:${stack.schedulerMetricsPort}/metrics`;
  const read = async () => [await scrapeSum(url, 'metronome_scheduler_tick_seconds_sum'), await scrapeSum(url, 'metronome_scheduler_tick_seconds_count')];
  const [s0, c0] = await read();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const [s1, c1] = await read();
  return +(((s1 - s0) / Math.max(c1 - c0, 1)) * 1000).toFixed(2);
}
