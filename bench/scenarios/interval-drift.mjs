import { createAccounts, createCampaigns, listRuns, percentile, sandbox, START_LAG_STACK, withStack } from './common.mjs';

// Interval campaigns at the platform: N campaigns every E seconds, C chats each, own accounts at
// 600 sends a minute, the start-lag stack (2 senders, sandbox answering in 20 ms), run for M
// minutes. Judged by what the sandbox received, by time:
// - each chat's spacing between two messages of its campaign, minus everySeconds: never below 0
//   (DESIGN promise 1: the gate is the chat's last delivery), and its median is how much later
//   each occurrence reaches the chat than the one before (a chat's gate is its last answer plus
//   the interval, so every occurrence that the gate holds comes at least one platform round
//   trip later than the one before: the drift);
// - how late each occurrence's first message is after its scheduledAt, for the first measured
//   occurrence and the last, beside the start lag the runs report (startedAt).
// The campaigns are created together, so their occurrences come due together, as campaigns
// created at once or started on the hour do: every interval, a burst of N runs. BENCH_CAMPAIGNS
// and BENCH_MINUTES change N and M (5 campaigns: the senders' share without a burst to share).
export async function intervalDrift(env) {
  const campaigns = Number(process.env.BENCH_CAMPAIGNS ?? (env.quick ? 10 : 50));
  const everySeconds = env.quick ? 5 : 10;
  const chatsPerCampaign = 5;
  const minutes = Number(process.env.BENCH_MINUTES ?? (env.quick ? 1 : 3));
  return withStack(env, START_LAG_STACK, async ({ stack, token }) => {
    const accounts = await createAccounts(stack, token, campaigns, {});
    await createCampaigns(stack, token, accounts, { prefix: 'i', chatsPerCampaign, schedule: () => ({ type: 'interval', everySeconds }) });
    await new Promise((r) => setTimeout(r, minutes * 60_000));
    const runs = await listRuns(stack, token);
    const messages = (await sandbox(stack, '/sandbox/messages')).items;
    const stats = await sandbox(stack, '/sandbox/stats');

    const firstReceived = new Map();
    for (const m of messages) {
      const runId = m.idempotencyKey.split(':')[0];
      firstReceived.set(runId, Math.min(firstReceived.get(runId) ?? Infinity, m.receivedAt));
    }
    // each campaign's occurrences in order; the last one may still be under way, so it is left out
    const byCampaign = new Map();
    for (const r of runs)
      byCampaign
        .set(r.campaignId, byCampaign.get(r.campaignId) ?? [])
        .get(r.campaignId)
        .push(r);
    const lateByOccurrence = [];
    const startLag = [];
    for (const list of byCampaign.values()) {
      list.sort((a, b) => a.scheduledAt.localeCompare(b.scheduledAt));
      list.slice(0, -1).forEach((r, i) => {
        if (firstReceived.has(r.id)) (lateByOccurrence[i] ??= []).push((firstReceived.get(r.id) - Date.parse(r.scheduledAt)) / 1000);
        if (r.startedAt) startLag.push((Date.parse(r.startedAt) - Date.parse(r.scheduledAt)) / 1000);
      });
    }
    const occurrences = lateByOccurrence.filter((l) => l.length === campaigns);
    const byChat = new Map();
    for (const m of messages)
      byChat
        .set(m.chatId, byChat.get(m.chatId) ?? [])
        .get(m.chatId)
        .push(m.receivedAt);
    const stepsMs = [];
    for (const times of byChat.values()) {
      times.sort((a, b) => a - b);
      for (let i = 1; i < times.length; i++) stepsMs.push(times[i] - times[i - 1] - everySeconds * 1000);
    }
    const first = occurrences[0] ?? [];
    const last = occurrences.at(-1) ?? [];
    return {
      params: { campaigns, everySeconds, chatsPerCampaign, minutes, senders: 2, sandboxLatencyMs: 20, maxSendPerMinute: 600 },
      figures: {
        'occurrences measured per campaign': occurrences.length,
        'chat spacing minus everySeconds p50 ms (drift per occurrence)': percentile(stepsMs, 50),
        'chat spacing minus everySeconds p90 ms': percentile(stepsMs, 90),
        'chat spacing minus everySeconds min ms (never < 0)': Math.min(...stepsMs),
        'first message after scheduledAt p50 s, first occurrence': percentile(first, 50),
        'first message after scheduledAt p50 s, last occurrence': percentile(last, 50),
        'first message after scheduledAt p99 s, last occurrence': percentile(last, 99),
        'run start lag p99 s (startedAt)': percentile(startLag, 99),
        'duplicate deliveries': stats.duplicateKeys,
      },
      lateByOccurrenceP50: occurrences.map((l) => percentile(l, 50)),
    };
  });
}
