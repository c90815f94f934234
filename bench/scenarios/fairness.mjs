import { eventually } from '@metronome/testkit';
import { call, chats, createAccounts, listRuns, sandbox, withStack } from './common.mjs';

// One heavy user must not starve the rest: one account with 5,000 chats and 100 accounts with
// 5 chats each, all due at the same moment, one sender at its default concurrency. Figure: how
// late the small runs start (startedAt minus scheduledAt, from the API), p50/p99/max.
export async function fairness(env) {
  const small = env.quick ? 30 : 100;
  const bigChats = env.quick ? 1000 : 5000;
  return withStack(env, { senders: 1 }, async ({ stack, token }) => {
    const accs = await createAccounts(stack, token, small + 1, { maxSendPerMinute: 60_000, groupConcurrency: 10 });
    const at = new Date(Date.now() + 5000).toISOString();
    const campaign = (a, name, targets) =>
      call(stack, 'POST', '/v1/campaigns', token, {
        accountId: a.id, name, timezone: 'UTC', schedule: { type: 'once', at }, messages: [{ type: 'text', text: 'hi' }], targets,
      });
    // the heavy campaign first, so its run is created (and queued) ahead of the small ones
    const big = await campaign(accs[0], 'big', chats('big', bigChats));
    for (let i = 1; i <= small; i += 20) {
      await Promise.all(accs.slice(i, Math.min(i + 20, small + 1)).map((a, k) => campaign(a, `small${i + k}`, chats(`s${i + k}`, 5))));
    }
    const runs = await eventually(
      'the small runs',
      async () => {
        const all = await listRuns(stack, token);
        const smallRuns = all.filter((r) => r.campaignId !== big.id);
        return smallRuns.length === small && smallRuns.every((r) => !['queued', 'running'].includes(r.status)) ? all : null;
      },
      600_000,
      250,
    );
    const bigRun = runs.find((r) => r.campaignId === big.id);
    const lags = runs
      .filter((r) => r.campaignId !== big.id)
      .map((r) => (Date.parse(r.startedAt) - Date.parse(r.scheduledAt)) / 1000)
      .sort((a, b) => a - b);
    const q = (p) => lags[Math.min(lags.length - 1, Math.ceil((p / 100) * lags.length) - 1)];
    const stats = await sandbox(stack, '/sandbox/stats');
    return {
      params: { smallAccounts: small, smallChats: 5, bigChats, senders: 1, senderConcurrency: Number(process.env.SENDER_CONCURRENCY ?? 128), sendsPerJob: 20 },
      figures: {
        'small runs start lag p50 s': q(50),
        'small runs start lag p99 s': q(99),
        'small runs start lag max s': lags[lags.length - 1],
        'small runs success': runs.filter((r) => r.campaignId !== big.id && r.status === 'success').length,
        'big run sent when small done': bigRun?.counts.sent ?? 0,
        'duplicate deliveries': stats.duplicateKeys,
      },
    };
  });
}
