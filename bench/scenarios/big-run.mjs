import { scrapeSum } from '@metronome/testkit';
import { createAccounts, createCampaigns, sandbox, waitForAccepted, waitForRuns, withStack } from './common.mjs';

// One large campaign alone: one account, 10,000 chats (the most a campaign takes), pace unbounded, a zero-latency sandbox,
// 2 senders. A run's jobs hold its account one at a time, so this is the speed of one run, set
// by how long each of its statements takes, not by how many runs share the machine (that is
// `throughput`). Its figures: sends per second over the whole run and over its first and last
// fifth (judged at the sandbox), and the senders' PostgreSQL statements and CPU per send. A
// claim whose cost grows with the targets still pending shows as a first fifth slower than
// the last. BENCH_BIG_CHATS sets the size.
export async function bigRun(env) {
  const size = Number(process.env.BENCH_BIG_CHATS ?? (env.quick ? 2_000 : 10_000));
  return withStack(env, { senders: 2 }, async ({ stack, token }) => {
    const urls = stack.senderMetricsPorts.map((p) => `http://127.0.0.1:${p}/metrics`);
    const sum = async (metric, labels) => (await Promise.all(urls.map((u) => scrapeSum(u, metric, labels)))).reduce((a, b) => a + b, 0);
    const [account] = await createAccounts(stack, token, 1, { maxSendPerMinute: 60_000, groupConcurrency: 10 });
    const before = { cpu: await sum('process_cpu_seconds_total'), queries: await sum('metronome_db_queries_total') };
    const at = new Date(Date.now() + 3000).toISOString();
    await createCampaigns(stack, token, [account], { prefix: 'big', chatsPerCampaign: size, text: 'hello', schedule: () => ({ type: 'once', at }) });
    await waitForAccepted(stack, 0, size);
    const [run] = await waitForRuns(stack, token, 1, 600_000);
    const sent = await sum('metronome_sends_total', 'result="sent"');
    const cpuSeconds = (await sum('process_cpu_seconds_total')) - before.cpu;
    const queries = (await sum('metronome_db_queries_total')) - before.queries;
    const times = (await sandbox(stack, '/sandbox/messages')).items.map((m) => m.receivedAt).sort((a, b) => a - b);
    const rate = (from, to) => (to - from) / ((times[to - 1] - times[from]) / 1000);
    const fifth = Math.floor(times.length / 5);
    const stats = await sandbox(stack, '/sandbox/stats');
    return {
      params: { chats: size, senders: 2, groupConcurrency: 10, maxSendPerMinute: 60_000 },
      figures: {
        'sends/s': rate(0, times.length),
        'sends/s, first fifth': rate(0, fifth),
        'sends/s, last fifth': rate(times.length - fifth, times.length),
        'pg statements/send': queries / sent,
        'sender CPU ms/send': (cpuSeconds * 1000) / sent,
        sends: times.length,
        'run status': run.status,
        'duplicate deliveries': stats.duplicateKeys,
      },
    };
  });
}
