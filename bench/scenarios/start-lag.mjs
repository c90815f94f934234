import { eventually, scrapeSum } from '@metronome/testkit';
import { postgresCpu } from '../micro/postgres-cpu.mjs';
import { listRuns, createAccounts, createSpreadCampaigns, percentile, sandbox, START_LAG_STACK, withStack } from './common.mjs';

// Start lag at scale: N interval campaigns (every 60 s, 5 chats each) on their own accounts,
// sandbox answering in 20 ms, for a few minutes. Like real campaigns, their phases differ: the
// first occurrences are spread evenly over one interval, starting 15 s after set-up. Lag =
// run start minus scheduledAt, read back through the API; early starts must be zero. Beside the
// lag, what the runs cost the senders while they ran (their own counters, from before the
// campaigns are created, once every new account's directory sync is over, per run started):
// CPU, PostgreSQL statements, Redis and BullMQ commands; and PostgreSQL's CPU per run (all of
// its processes on the machine, so only on an otherwise quiet one).
// `start-lag-10k` is the same at 10,000 campaigns (167 runs and 833 sends a second).
export async function startLag(env, full = 1000) {
  const campaigns = env.quick ? full / 10 : full;
  const minutes = env.quick ? 1.5 : 3;
  return withStack(env, START_LAG_STACK, async ({ stack, token }) => {
    const accs = await createAccounts(stack, token, campaigns, {});
    const senders = (metric, labels = '') =>
      Promise.all(stack.senderMetricsPorts.map((p) => scrapeSum(`http://127.0.0.1:${p}/metrics`, metric, labels))).then((v) => v.reduce((a, b) => a + b, 0));
    // a new account's chat directory is synced once: neither beside the runs nor counted as theirs
    await eventually('every new account synced', async () => (await senders('metronome_directory_syncs_total')) >= campaigns, 600_000, 500);
    // the first occurrence after every campaign exists: creating them takes about 10 ms each
    const base = Date.now() + 15_000 + campaigns * 10;
    const counters = () =>
      Promise.all([
        senders('process_cpu_seconds_total'),
        senders('metronome_db_queries_total'),
        senders('metronome_redis_commands_total', 'connection="app"'),
        senders('metronome_redis_commands_total', 'connection="worker"'),
      ]);
    const before = await counters();
    const postgresBefore = postgresCpu();
    await createSpreadCampaigns(stack, token, accs, { everySeconds: 60, chatsPerCampaign: 5, firstAt: base });
    if (Date.now() > base) throw new Error(`creating ${campaigns} campaigns outlasted their first occurrence`);
    await new Promise((r) => setTimeout(r, base - Date.now() + minutes * 60_000));
    const [cpu, statements, redis, bullmq] = (await counters()).map((v, i) => v - before[i]);
    const postgresSeconds = postgresCpu() - postgresBefore;
    const runs = await listRuns(stack, token);
    const started = runs.filter((r) => r.startedAt);
    const lags = started.map((r) => (Date.parse(r.startedAt) - Date.parse(r.scheduledAt)) / 1000);
    const early = lags.filter((l) => l < 0).length;
    const stats = await sandbox(stack, '/sandbox/stats');
    const lagCount = (
      await Promise.all(stack.senderMetricsPorts.map((p) => scrapeSum(`http://127.0.0.1:${p}/metrics`, 'metronome_run_start_lag_seconds_count')))
    ).reduce((a, b) => a + b, 0);
    return {
      params: { campaigns, chatsPerCampaign: 5, everySeconds: 60, minutes, senders: START_LAG_STACK.senders, sandboxLatencyMs: 20 },
      figures: {
        runs: runs.length,
        'runs started': started.length,
        'lag p50 s': percentile(lags, 50),
        'lag p95 s': percentile(lags, 95),
        'lag p99 s': percentile(lags, 99),
        'lag max s': Math.max(...lags),
        'early starts': early,
        'sends accepted': stats.accepted,
        'lag samples (metrics)': lagCount,
        'sender CPU ms/run': (cpu * 1000) / started.length,
        'PostgreSQL CPU ms/run': (postgresSeconds * 1000) / started.length,
        'pg statements/run': statements / started.length,
        'redis commands/run (locks, pace, enqueue)': redis / started.length,
        'redis commands/run (BullMQ worker)': bullmq / started.length,
      },
    };
  });
}
