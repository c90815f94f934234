import { scrapeSum } from '@metronome/testkit';
import { call, createAccounts, createCampaigns, sandbox, waitForRuns, withStack } from './common.mjs';

// Sends per second end to end with durable state: many accounts, pace unbounded, a zero-latency
// sandbox, two senders. Counted from the first to the last message the sandbox accepted.
export async function pipelineThroughput(env) {
  const accounts = env.quick ? 40 : 200;
  const perAccount = 50;
  const senders = 2;
  return withStack(env, { senders, senderEnv: { SENDER_CONCURRENCY: '32' } }, async ({ stack, token }) => {
    const accs = await createAccounts(stack, token, accounts, { maxSendPerMinute: 60_000, groupConcurrency: 10 });
    // the senders' CPU from here on: the campaigns' creation (the senders idle) and their sends,
    // over 10,000 sends, where the cost scenario's 2,500 weigh the start (code not yet optimised)
    const cpu = () => Promise.all(stack.senderMetricsPorts.map((p) => scrapeSum(`http://127.0.0.1:${p}/metrics`, 'process_cpu_seconds_total'))).then((v) => v.reduce((a, b) => a + b, 0));
    const cpuBefore = await cpu();
    const at = new Date(Date.now() + 3000).toISOString();
    await createCampaigns(stack, token, accs, { prefix: 'a', chatsPerCampaign: perAccount, text: 'hello', batch: 20, schedule: () => ({ type: 'once', at }) });
    const runs = await waitForRuns(stack, token, accounts, 600_000);
    const cpuSeconds = (await cpu()) - cpuBefore;
    const byStatus = {};
    for (const r of runs) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    const problems = {};
    for (const r of runs.filter((r) => r.status !== 'success')) {
      const t = await call(stack, 'GET', `/v1/runs/${r.id}/targets?limit=500`, token);
      for (const item of t.items.filter((i) => i.status !== 'sent')) {
        const key = `${item.status}:${item.error?.code ?? '-'}`;
        problems[key] = (problems[key] ?? 0) + 1;
      }
    }
    const stats = await sandbox(stack, '/sandbox/stats');
    const { items } = await sandbox(stack, '/sandbox/messages');
    const times = items.map((m) => m.receivedAt);
    const seconds = (Math.max(...times) - Math.min(...times)) / 1000;
    const sends = accounts * perAccount;
    return {
      params: { accounts, chatsPerAccount: perAccount, senders, senderConcurrency: 32, groupConcurrency: 10 },
      figures: {
        'sends/s': sends / seconds,
        'sender CPU ms/send': (cpuSeconds * 1000) / stats.accepted,
        'sends': stats.accepted,
        'runs success': runs.filter((r) => r.status === 'success').length,
        'duplicate deliveries': stats.duplicateKeys,
      },
      runsByStatus: byStatus,
      targetsNotSent: problems,
    };
  });
}
