import { eventually, scrapeSum } from '@metronome/testkit';
import { createAccounts, createCampaigns, sandbox, START_LAG_STACK, waitForRuns, withStack } from './common.mjs';

// What one small run costs the senders: the start-lag scenarios' runs (5 chats, own accounts,
// 600 sends a minute, 3 lanes, sandbox answering in 20 ms, 2 senders), counted per run by the
// senders themselves as `cost` counts per send: CPU (process_cpu_seconds_total), PostgreSQL
// statements, Redis commands on the app connection (locks, pace, enqueues) and on BullMQ's
// worker connection, jobs. Every counter is read before the campaigns are created (once every
// new account's directory sync is over) and after every run finished, so start-up, the syncs and
// idle polling are left out. The runs come due spread
// evenly over `spreadSeconds` (BENCH_COST_RATE runs a second, 100 by default), as start-lag's
// do, not all at once. BENCH_COST_CHATS and BENCH_COST_RUNS change the run's size and count.
export async function costSmallRuns(env) {
  const chatsPerRun = Number(process.env.BENCH_COST_CHATS ?? 5);
  const runs = Number(process.env.BENCH_COST_RUNS ?? (env.quick ? 100 : 600));
  const rate = Number(process.env.BENCH_COST_RATE ?? 100);
  const spreadMs = (runs / rate) * 1000;
  return withStack(env, START_LAG_STACK, async ({ stack, token }) => {
    const urls = stack.senderMetricsPorts.map((p) => `http://127.0.0.1:${p}/metrics`);
    const sum = async (metric, labels) => (await Promise.all(urls.map((u) => scrapeSum(u, metric, labels)))).reduce((a, b) => a + b, 0);
    const read = async () => ({
      cpu: await sum('process_cpu_seconds_total'),
      queries: await sum('metronome_db_queries_total'),
      redisApp: await sum('metronome_redis_commands_total', 'connection="app"'),
      redisWorker: await sum('metronome_redis_commands_total', 'connection="worker"'),
      jobs: await sum('metronome_job_outcomes_total'),
      sent: await sum('metronome_sends_total', 'result="sent"'),
    });
    const accs = await createAccounts(stack, token, runs, {});
    // a new account's chat directory is synced once: that is not a run's cost
    await eventually('every new account synced', async () => (await sum('metronome_directory_syncs_total')) >= runs, 120_000, 200);
    // every campaign exists before the first comes due: creating them takes about 10 ms each
    const base = Date.now() + 5_000 + runs * 10;
    const before = await read();
    await createCampaigns(stack, token, accs, {
      prefix: 's',
      chatsPerCampaign: chatsPerRun,
      schedule: (i) => ({ type: 'once', at: new Date(base + Math.floor((i * spreadMs) / runs)).toISOString() }),
    });
    if (Date.now() > base) throw new Error(`creating ${runs} campaigns outlasted their first occurrence`);
    const finished = await waitForRuns(stack, token, runs, 600_000);
    const after = await read();
    const per = (k) => (after[k] - before[k]) / runs;
    const stats = await sandbox(stack, '/sandbox/stats');
    return {
      params: { runs, chatsPerRun, runsPerSecond: rate, senders: START_LAG_STACK.senders, sandboxLatencyMs: 20, maxSendPerMinute: 600 },
      figures: {
        'sender CPU ms/run': per('cpu') * 1000,
        'pg statements/run': per('queries'),
        'redis commands/run (locks, pace, enqueue)': per('redisApp'),
        'redis commands/run (BullMQ worker)': per('redisWorker'),
        'jobs/run': per('jobs'),
        'sends/run': per('sent'),
        'runs success': finished.filter((r) => r.status === 'success').length,
        'duplicate deliveries': stats.duplicateKeys,
      },
    };
  });
}
