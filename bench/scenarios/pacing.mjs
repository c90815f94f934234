import { call, chats, createAccounts, mostInWindow, sandbox, waitForRuns, withStack } from './common.mjs';

// Pacing efficiency: one account at 600 sends/min must take (n - 1) × 100 ms, not more (wasted
// capacity) and never less (too fast). Ratio = measured span / ideal span.
export async function pacingEfficiency(env) {
  const n = env.quick ? 200 : 1000;
  const perMinute = 600;
  return withStack(env, { senders: 2 }, async ({ stack, token }) => {
    const [acc] = await createAccounts(stack, token, 1, { maxSendPerMinute: perMinute, groupConcurrency: 3 });
    await call(stack, 'POST', '/v1/campaigns', token, {
      accountId: acc.id,
      name: 'paced',
      timezone: 'UTC',
      schedule: { type: 'once', at: new Date().toISOString() },
      messages: [{ type: 'text', text: 'hello' }],
      targets: chats('p', n),
    });
    await waitForRuns(stack, token, 1, 600_000);
    const { times } = await sandbox(stack, `/sandbox/accounts/${acc.externalId}/sends`);
    const span = (Math.max(...times) - Math.min(...times)) / 1000;
    const ideal = ((n - 1) * 60) / perMinute;
    return {
      params: { chats: n, maxSendPerMinute: perMinute, burst: 1, senders: 2 },
      figures: {
        'completion s': span,
        'ideal s': ideal,
        'ratio (goal ≤ 1.02)': span / ideal,
        'most sends in any 10 s (limit 101)': mostInWindow(times, 10_000),
        'most sends in any 1 s (limit 11)': mostInWindow(times, 1_000),
      },
    };
  });
}
