import { call, createAccounts, createCampaigns, sandbox, sendersCpu, waitForAccepted, waitForRuns, withStack } from './common.mjs';

// Sends per second end to end with durable state: many accounts, pace unbounded, a zero-latency
// sandbox, two senders. Counted from the first to the last message the sandbox accepted.
//
// Three phases on one stack, each on accounts of its own. Cold: the first sends of a stack just
// started (40 accounts × 50 chats), while V8 is still compiling the hot path: a profile of the
// senders (perf, on-CPU) put a quarter of their CPU then in the optimising compiler's threads.
// Then two passes of 200 accounts × 50 chats; the second gives the headline figures, as the
// senders of a deployment in use send (the first still paid for some compiling: about 0.35 ms
// of sender CPU per send against 0.24 in the second). The queue ceiling beside it is likewise
// measured warm (queue-ceiling.mjs). BENCH_WARMUP_ACCOUNTS sets the cold phase's size (0: none).
const PER_ACCOUNT = 50;

export async function pipelineThroughput(env) {
  const accounts = env.quick ? 40 : 200;
  const warmupAccounts = Number(process.env.BENCH_WARMUP_ACCOUNTS ?? (env.quick ? 10 : 40));
  const senders = 2;
  return withStack(env, { senders, senderEnv: { SENDER_CONCURRENCY: '32' } }, async ({ stack, token }) => {
    const all = await createAccounts(stack, token, warmupAccounts + 2 * accounts, { maxSendPerMinute: 60_000, groupConcurrency: 10 });
    const cpu = () => sendersCpu(stack);
    const cold = warmupAccounts > 0 ? await phase(stack, token, all.slice(0, warmupAccounts), 'w', cpu) : null;
    const first = await phase(stack, token, all.slice(warmupAccounts, warmupAccounts + accounts), 'a', cpu);
    const warm = await phase(stack, token, all.slice(warmupAccounts + accounts), 'b', cpu);
    const stats = await sandbox(stack, '/sandbox/stats');
    return {
      params: { accounts, chatsPerAccount: PER_ACCOUNT, senders, senderConcurrency: 32, groupConcurrency: 10, coldPhaseAccounts: warmupAccounts },
      figures: {
        'sends/s': warm.sendsPerSecond,
        'sender CPU ms/send': warm.cpuMsPerSend,
        sends: warm.sends,
        'runs success': warm.runs.filter((r) => r.status === 'success').length,
        'first pass sends/s': first.sendsPerSecond,
        'first pass sender CPU ms/send': first.cpuMsPerSend,
        'first pass runs success': first.runs.filter((r) => r.status === 'success').length,
        ...(cold && { 'cold phase sends/s': cold.sendsPerSecond, 'cold phase sender CPU ms/send': cold.cpuMsPerSend, 'cold phase sends': cold.sends }),
        'duplicate deliveries': stats.duplicateKeys,
      },
      runsByStatus: countBy([...first.runs, ...warm.runs], (r) => r.status),
      targetsNotSent: await notSent(stack, token, [...first.runs, ...warm.runs]),
    };
  });
}

/**
 * One campaign per account, all due 3 s after their creation began, sent to the end: the
 * senders' CPU over it (the creation, when they idle, and the sends) and the sends per second
 * the sandbox received, between the first and the last message of the phase's chats.
 */
export async function phase(stack, token, accounts, prefix, cpu) {
  const before = await cpu();
  const base = (await sandbox(stack, '/sandbox/stats')).accepted;
  const ids = new Set(accounts.map((a) => a.id));
  const at = new Date(Date.now() + 3000).toISOString();
  await createCampaigns(stack, token, accounts, { prefix, chatsPerCampaign: PER_ACCOUNT, text: 'hello', batch: 20, schedule: () => ({ type: 'once', at }) });
  // the sends watched at the platform (cheap), then the runs' ends read once they are all in
  await waitForAccepted(stack, base, accounts.length * PER_ACCOUNT);
  const runs = await waitForRuns(stack, token, accounts.length, 600_000, (r) => ids.has(r.accountId));
  const cpuSeconds = (await cpu()) - before;
  const times = (await sandbox(stack, '/sandbox/messages')).items.filter((m) => m.chatId.startsWith(prefix)).map((m) => m.receivedAt);
  return {
    runs,
    sends: times.length,
    sendsPerSecond: times.length / ((Math.max(...times) - Math.min(...times)) / 1000),
    cpuMsPerSend: (cpuSeconds * 1000) / times.length,
  };
}

/** The targets of runs that did not succeed, counted by status and error code. */
async function notSent(stack, token, runs) {
  const problems = {};
  for (const r of runs.filter((r) => r.status !== 'success')) {
    const t = await call(stack, 'GET', `/v1/runs/${r.id}/targets?limit=500`, token);
    for (const item of t.items.filter((i) => i.status !== 'sent')) {
      const key = `${item.status}:${item.error?.code ?? '-'}`;
      problems[key] = (problems[key] ?? 0) + 1;
    }
  }
  return problems;
}

const countBy = (items, key) => {
  const counts = {};
  for (const x of items) counts[key(x)] = (counts[key(x)] ?? 0) + 1;
  return counts;
};
