import { eventually } from '@metronome/testkit';
import { call, chats, createAccounts, listRuns, sandbox, withStack } from './common.mjs';

// One heavy user must not starve the rest: one account with 5,000 chats and 100 accounts with
// 5 chats each, all due at the same moment, one sender at its default concurrency. Figure: how
// late the small runs start (startedAt minus scheduledAt, from the API), p50/p99/max.
//
// Measured on a stack that has run the same path, as a deployment in use has (as throughput,
// queue-ceiling and first-start are; see bench/results/HISTORY.md, "Warm and cold"): a cold phase of
// the same shape on accounts of its own comes first, is reported apart, and is let finish
// before the measured wave. On a stack just started the small runs all started together
// 0.44–0.56 s after they were due, against p99 0.14–0.22 s for the same wave once the stack had
// run (2026-11-28, a slow hour): what a stack's first minute costs (its connections' first
// statements, each planned afresh, and V8 compiling the hot path), not fairness.
// BENCH_WARMUP=0: no cold phase (the measured wave is then cold).
export async function fairness(env) {
  const small = env.quick ? 30 : 100;
  const bigChats = env.quick ? 1000 : 5000;
  const warmup = process.env.BENCH_WARMUP !== '0';
  return withStack(env, { senders: 1 }, async ({ stack, token }) => {
    const accs = await createAccounts(stack, token, (warmup ? 2 : 1) * (small + 1), { maxSendPerMinute: 60_000, groupConcurrency: 10 });
    const cold = warmup ? await wave(stack, token, accs.slice(small + 1), 'w', bigChats) : null;
    const { lags, bigRun, smallRuns } = await wave(stack, token, accs.slice(0, small + 1), '', bigChats);
    const stats = await sandbox(stack, '/sandbox/stats');
    return {
      params: {
        smallAccounts: small,
        smallChats: 5,
        bigChats,
        senders: 1,
        senderConcurrency: Number(process.env.SENDER_CONCURRENCY ?? 128),
        sendsPerJob: 20,
        coldPhase: warmup,
      },
      figures: {
        'small runs start lag p50 s': quantile(lags, 50),
        'small runs start lag p99 s': quantile(lags, 99),
        'small runs start lag max s': lags[lags.length - 1],
        'small runs success': smallRuns.filter((r) => r.status === 'success').length,
        'big run sent when small done': bigRun?.counts.sent ?? 0,
        ...(cold && { 'cold phase: small runs start lag p50 s': quantile(cold.lags, 50), 'cold phase: small runs start lag p99 s': quantile(cold.lags, 99) }),
        'duplicate deliveries': stats.duplicateKeys,
      },
    };
  });
}

/**
 * One wave: the heavy campaign, then the small ones, all due 5 s after the first is created;
 * waits until the small runs have ended (a cold phase: the heavy run too, so that the measured
 * wave meets one heavy run only) and returns the small runs' start lags, sorted.
 */
async function wave(stack, token, accs, prefix, bigChats) {
  const at = new Date(Date.now() + 5000).toISOString();
  const campaign = (a, name, targets) =>
    call(stack, 'POST', '/v1/campaigns', token, {
      accountId: a.id,
      name,
      timezone: 'UTC',
      schedule: { type: 'once', at },
      messages: [{ type: 'text', text: 'hi' }],
      targets,
    });
  // the heavy campaign first, so its run is created (and queued) ahead of the small ones
  const big = await campaign(accs[0], `${prefix}big`, chats(`${prefix}big`, bigChats));
  for (let i = 1; i < accs.length; i += 20) {
    await Promise.all(accs.slice(i, Math.min(i + 20, accs.length)).map((a, k) => campaign(a, `${prefix}small${i + k}`, chats(`${prefix}s${i + k}`, 5))));
  }
  const ended = (r) => r && !['queued', 'running'].includes(r.status);
  const smallAccounts = new Set(accs.slice(1).map((a) => a.id));
  const runs = await eventually(
    prefix ? 'the cold phase' : 'the small runs',
    async () => {
      const all = await listRuns(stack, token);
      const smallRuns = all.filter((r) => smallAccounts.has(r.accountId));
      const done = smallRuns.length === accs.length - 1 && smallRuns.every(ended) && (!prefix || ended(all.find((r) => r.campaignId === big.id)));
      return done ? all : null;
    },
    600_000,
    250,
  );
  const smallRuns = runs.filter((r) => smallAccounts.has(r.accountId));
  const lags = smallRuns.map((r) => (Date.parse(r.startedAt) - Date.parse(r.scheduledAt)) / 1000).sort((a, b) => a - b);
  return { lags, smallRuns, bigRun: runs.find((r) => r.campaignId === big.id) };
}

const quantile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
