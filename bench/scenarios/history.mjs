import { scrapeSum } from '@metronome/testkit';
import { call, createAccounts, withStack } from './common.mjs';
import { fillHistory, historyBytes, seedHistoryOwners } from './history-fill.mjs';
import { pacedLoad } from './paced-load.mjs';
import { phase } from './throughput.mjs';

// The same stack measured on an empty database, then after a long history is written into it
// (history-fill.mjs: 1,000,000 finished runs of 20 chats, 20 million targets, over 400 days;
// BENCH_HISTORY_RUNS changes the size): sending throughput, every list and page the API and
// the console's Activity page ask for, and the scheduler's tick. A query that reads history it
// does not return shows as a ratio above 1. The throughput passes run on a stack warmed by a
// cold phase first, as the throughput scenario does.
const RATE = 20;
const SECONDS = 10;

export async function history(env) {
  const runs = env.quick ? 20_000 : Number(process.env.BENCH_HISTORY_RUNS ?? 1_000_000);
  const accountsPerPass = env.quick ? 20 : 100;
  return withStack(env, { senders: 2, senderEnv: { SENDER_CONCURRENCY: '32' } }, async ({ stack, token, tenantId, db }) => {
    const accounts = await createAccounts(stack, token, 40 + 2 * accountsPerPass, { maxSendPerMinute: 60_000, groupConcurrency: 10 });
    const cpu = () => Promise.all(stack.senderMetricsPorts.map((p) => scrapeSum(`http://127.0.0.1:${p}/metrics`, 'process_cpu_seconds_total'))).then((v) => v.reduce((a, b) => a + b, 0));
    await phase(stack, token, accounts.slice(0, 40), 'w', cpu);

    const measure = async (prefix, slice) => {
      const sending = await phase(stack, token, slice, prefix, cpu);
      const run = sending.runs[0];
      const campaignId = run.campaignId;
      const accountId = run.accountId;
      const deep = await cursorAfterPages(stack, stack.adminToken, '/v1/runs?limit=50', 3);
      const lists = {
        'admin all runs (Activity)': ['/v1/runs?limit=50', stack.adminToken],
        'admin status=success': ['/v1/runs?limit=50&status=success', stack.adminToken],
        'admin status=failed': ['/v1/runs?limit=50&status=failed', stack.adminToken],
        'admin 4th page': [`/v1/runs?limit=50&cursor=${encodeURIComponent(deep)}`, stack.adminToken],
        'tenant runs': ['/v1/runs?limit=50', token],
        'tenant status=partial': ['/v1/runs?limit=50&status=partial', token],
        'campaign runs': [`/v1/runs?limit=50&campaignId=${campaignId}`, token],
        'account runs': [`/v1/runs?limit=50&accountId=${accountId}`, token],
        'one run': [`/v1/runs/${run.id}`, token],
        "one run's targets": [`/v1/runs/${run.id}/targets?limit=100`, token],
        'tenants (admin Activity)': ['/v1/tenants?limit=500', stack.adminToken],
      };
      const p99 = {};
      for (const [name, [path, bearer]] of Object.entries(lists)) {
        const r = await pacedLoad({ baseUrl: stack.apiUrl, path: () => path, rate: RATE, seconds: SECONDS, headers: { authorization: `Bearer ${bearer}` } });
        const bad = Object.entries(r.statuses).filter(([s]) => s !== '200');
        if (bad.length) throw new Error(`${name}: answers ${JSON.stringify(r.statuses)}`);
        p99[name] = r.p99;
      }
      return { sendsPerSecond: sending.sendsPerSecond, cpuMsPerSend: sending.cpuMsPerSend, p99, tickMs: await meanTickMs(stack, 20_000) };
    };

    // the history's tenants, accounts and campaigns exist in both measurements: only runs differ
    const owners = await seedHistoryOwners(db.url, { tenantId });
    const empty = await measure('e', accounts.slice(40, 40 + accountsPerPass));
    const fill = await fillHistory(db.url, owners, { runs, log: (line) => process.stdout.write(`  ${line}\n`) });
    const bytes = await historyBytes(db.url);
    const full = await measure('f', accounts.slice(40 + accountsPerPass));

    const figures = {
      'history runs': runs,
      'history written in s': fill.seconds,
      'sends/s empty': empty.sendsPerSecond,
      'sends/s with history': full.sendsPerSecond,
      'sends/s ratio (goal ≥ 0.9)': full.sendsPerSecond / empty.sendsPerSecond,
      'scheduler tick mean ms empty': empty.tickMs,
      'scheduler tick mean ms with history': full.tickMs,
    };
    for (const name of Object.keys(empty.p99)) {
      figures[`${name} p99 ms empty`] = empty.p99[name];
      figures[`${name} p99 ms with history`] = full.p99[name];
    }
    figures['worst list p99 ratio (goal ≤ 2)'] = Math.max(...Object.keys(empty.p99).map((n) => full.p99[n] / Math.max(empty.p99[n], 1)));
    figures['worst list p99 ms with history (goal ≤ 50)'] = Math.max(...Object.values(full.p99));
    for (const [table, { bytes: b, rows }] of Object.entries(bytes)) figures[`${table} bytes per row`] = Math.round(b / Math.max(rows, 1));
    return { params: { runs, targetsPerRun: 20, days: 400, accountsPerPass, rate: RATE, seconds: SECONDS }, figures, bytes };
  });
}

/** The cursor `pages` pages into a list, as "load more" clicked that many times would send. */
async function cursorAfterPages(stack, bearer, path, pages) {
  let cursor = null;
  for (let i = 0; i < pages; i++) {
    const page = await call(stack, 'GET', `${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, bearer);
    cursor = page.nextCursor;
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
