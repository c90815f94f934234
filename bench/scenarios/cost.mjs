import { scrapeSum } from '@metronome/testkit';
import { createAccounts, createCampaigns, sandbox, waitForRuns, withStack } from './common.mjs';

// What one send costs: PostgreSQL statements and Redis commands issued by the senders, divided
// by the parts they delivered. Counted by the senders themselves (a Kysely plugin that counts
// every statement, a wrapper around ioredis sendCommand on both connections) and read from their
// /metrics after every run finished, so nothing else sharing the database or Redis is counted.
// Sender CPU per send comes from process_cpu_seconds_total (its growth from before the campaigns are created, so start-up is left out).
// BullMQ's blocking connection (a duplicate it makes for waiting on jobs) is not counted.
export async function sendCost(env) {
  const accounts = env.quick ? 10 : 50;
  const perAccount = 50;
  const senders = 2;
  return withStack(env, { senders, senderEnv: { SENDER_CONCURRENCY: '32' } }, async ({ stack, token }) => {
    const urls = stack.senderMetricsPorts.map((p) => `http://127.0.0.1:${p}/metrics`);
    const sum = async (metric, labels) => (await Promise.all(urls.map((u) => scrapeSum(u, metric, labels)))).reduce((a, b) => a + b, 0);
    // start-up (module loading, connections) is not a cost of sending
    const cpuBefore = await sum('process_cpu_seconds_total');
    const accs = await createAccounts(stack, token, accounts, { maxSendPerMinute: 60_000, groupConcurrency: 10 });
    const at = new Date(Date.now() + 3000).toISOString();
    // 25 at a time (more at once from one address would meet AUTH_FAILURES_PER_MINUTE, which
    // counts a request until its token proves valid); all are due together at `at`
    await createCampaigns(stack, token, accs, { prefix: 'a', chatsPerCampaign: perAccount, text: 'hello', schedule: () => ({ type: 'once', at }) });
    const runs = await waitForRuns(stack, token, accounts, 600_000);
    const sent = await sum('metronome_sends_total', 'result="sent"');
    const queries = await sum('metronome_db_queries_total');
    const redisApp = await sum('metronome_redis_commands_total', 'connection="app"');
    const redisWorker = await sum('metronome_redis_commands_total', 'connection="worker"');
    const jobs = await sum('metronome_job_outcomes_total');
    const cpuSeconds = (await sum('process_cpu_seconds_total')) - cpuBefore;
    const stats = await sandbox(stack, '/sandbox/stats');
    return {
      params: { accounts, chatsPerAccount: perAccount, parts: 1, senders, sendsPerJob: 20, groupConcurrency: 10 },
      figures: {
        'pg statements/send': queries / sent,
        'redis commands/send (locks, pace, enqueue)': redisApp / sent,
        'redis commands/send (BullMQ worker)': redisWorker / sent,
        'jobs/send': jobs / sent,
        // CPU is robust to a busy machine where wall-clock rates are not
        'sender CPU ms/send': (cpuSeconds * 1000) / sent,
        sends: sent,
        'duplicate deliveries': stats.duplicateKeys,
        'runs success': runs.filter((r) => r.status === 'success').length,
      },
    };
  });
}
