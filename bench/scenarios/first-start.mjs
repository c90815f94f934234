import { scrapeSum } from '@metronome/testkit';
import { createAccounts, createCampaigns, listRuns, percentile, sandbox, START_LAG_STACK, withStack } from './common.mjs';

// First occurrences start at once: N interval campaigns (every 30 s, 3 chats each, own
// accounts, sandbox answering in 20 ms, 2 senders) created as fast as the API takes them, each
// due the moment it is created (no startAt). Start lag = run startedAt minus scheduledAt, read
// back through the API, split between each campaign's first run (created by the API in the
// campaign's own transaction) and its later ones (the regular tick, with its lookahead).
// A cold phase comes first: W one-off campaigns due at once on accounts of their own (the same
// path: an instant start, a first job), created as fast, on the stack just started; then, 10 s
// later, the measured burst on a stack that has run this code, as a deployment in use has (in
// a stack just started, V8 still compiles the hot path: the senders spent a quarter of their
// CPU in its compiler threads; see throughput.mjs). The cold phase's first runs are reported
// apart. BENCH_WARMUP=W sets its size (default 1,000, as many as the burst: after 300, first
// runs p99 was 0.17–0.29 s, after 1,000 0.15–0.19 s; 0: none, the measured burst is then cold).
export async function firstStart(env) {
  const campaigns = env.quick ? 100 : 1000;
  const minutes = env.quick ? 1 : 2;
  return withStack(env, START_LAG_STACK, async ({ stack, token }) => {
    const warmup = Number(process.env.BENCH_WARMUP ?? (env.quick ? 100 : 1000));
    const all = await createAccounts(stack, token, campaigns + warmup, {});
    const accs = all.slice(warmup);
    const batch = Number(process.env.BENCH_CREATE_BATCH ?? 25);
    const cold = new Set(
      warmup > 0
        ? await createCampaigns(stack, token, all.slice(0, warmup), {
            prefix: 'w',
            chatsPerCampaign: 3,
            batch,
            schedule: () => ({ type: 'once', at: new Date().toISOString() }),
          })
        : [],
    );
    if (warmup > 0) await new Promise((r) => setTimeout(r, 10_000));
    const senderSum = async (metric, labels) =>
      (await Promise.all(stack.senderMetricsPorts.map((p) => scrapeSum(`http://127.0.0.1:${p}/metrics`, metric, labels)))).reduce((a, b) => a + b, 0);
    // the senders' job counters as they stand (the warm-up's jobs), taken off every figure below
    const queueState = async () => ({
      jobs: await senderSum('metronome_job_wait_seconds_count'),
      waitSum: await senderSum('metronome_job_wait_seconds_sum'),
      fast: await senderSum('metronome_job_wait_seconds_bucket', 'le="0.1"'),
      heldSum: await senderSum('metronome_job_seconds_sum'),
      heldCount: await senderSum('metronome_job_seconds_count'),
      statements: await senderSum('metronome_db_queries_total'),
      redisApp: await senderSum('metronome_redis_commands_total', 'connection="app"'),
      redisWorker: await senderSum('metronome_redis_commands_total', 'connection="worker"'),
    });
    const since = (a, b) => Object.fromEntries(Object.keys(a).map((k) => [k, a[k] - b[k]]));
    const warm = await queueState();
    const createdAt = Date.now();
    const measured = new Set(
      await createCampaigns(stack, token, accs, { prefix: 'f', chatsPerCampaign: 3, batch, schedule: () => ({ type: 'interval', everySeconds: 30 }) }),
    );
    const createSeconds = (Date.now() - createdAt) / 1000;
    // the senders' queue during the burst of first runs: read once they have all started
    await new Promise((r) => setTimeout(r, 5_000));
    const burst = since(await queueState(), warm);
    await new Promise((r) => setTimeout(r, minutes * 60_000 - 5_000));
    const tickUrl = `http://127.0.0.1:${stack.schedulerMetricsPort}/metrics`;
    const ticks = {
      count: await scrapeSum(tickUrl, 'metronome_scheduler_tick_seconds_count'),
      sum: await scrapeSum(tickUrl, 'metronome_scheduler_tick_seconds_sum'),
    };
    const listed = await listRuns(stack, token);
    const runs = listed.filter((r) => r.startedAt && measured.has(r.campaignId));
    const coldLags = listed.filter((r) => r.startedAt && cold.has(r.campaignId)).map((r) => (Date.parse(r.startedAt) - Date.parse(r.scheduledAt)) / 1000);
    const firstOf = new Map();
    for (const r of runs) if (!firstOf.has(r.campaignId) || r.scheduledAt < firstOf.get(r.campaignId).scheduledAt) firstOf.set(r.campaignId, r);
    const lag = (r) => (Date.parse(r.startedAt) - Date.parse(r.scheduledAt)) / 1000;
    const first = [...firstOf.values()].map(lag);
    // the burst's first second apart: every creator starts at once, on processes that have not run this code yet
    const burstStart = Math.min(...[...firstOf.values()].map((r) => Date.parse(r.scheduledAt)));
    const inFirstSecond = (r) => Date.parse(r.scheduledAt) < burstStart + 1000;
    const firstSecond = [...firstOf.values()].filter(inFirstSecond).map(lag);
    const afterFirstSecond = [...firstOf.values()].filter((r) => !inFirstSecond(r)).map(lag);
    // where a first run's lag goes: the run created (in the campaign's transaction: about 0), then a sender taking it
    const created = [...firstOf.values()].map((r) => (Date.parse(r.createdAt) - Date.parse(r.scheduledAt)) / 1000);
    const taken = [...firstOf.values()].map((r) => (Date.parse(r.startedAt) - Math.max(Date.parse(r.createdAt), Date.parse(r.scheduledAt))) / 1000);
    // the senders' own account of their queue: jobs (first, later and continuations) that sat
    // due while every slot was busy
    const total = since(await queueState(), warm);
    // as the platform saw it: each run's first message received minus its scheduledAt
    const received = new Map();
    for (const m of (await sandbox(stack, '/sandbox/messages')).items) {
      const runId = m.idempotencyKey.split(':')[0];
      received.set(runId, Math.min(received.get(runId) ?? Infinity, m.receivedAt));
    }
    const firstReceived = [...firstOf.values()].filter((r) => received.has(r.id)).map((r) => (received.get(r.id) - Date.parse(r.scheduledAt)) / 1000);
    const laterReceived = runs
      .filter((r) => firstOf.get(r.campaignId) !== r && received.has(r.id))
      .map((r) => (received.get(r.id) - Date.parse(r.scheduledAt)) / 1000);
    const laterRuns = runs.filter((r) => firstOf.get(r.campaignId) !== r);
    const later = laterRuns.map(lag);
    // where a later run's lag goes: created by the tick (ahead of time, its job delayed), then a sender taking it
    const laterCreated = laterRuns.map((r) => (Date.parse(r.createdAt) - Date.parse(r.scheduledAt)) / 1000);
    const laterTaken = laterRuns.map((r) => (Date.parse(r.startedAt) - Math.max(Date.parse(r.createdAt), Date.parse(r.scheduledAt))) / 1000);
    return {
      params: {
        campaigns,
        warmup,
        createConcurrency: batch,
        senderConcurrency: Number(process.env.SENDER_CONCURRENCY ?? 128),
        chatsPerCampaign: 3,
        everySeconds: 30,
        minutes,
        senders: START_LAG_STACK.senders,
        sandboxLatencyMs: 20,
        schedulerTickMs: 1000,
      },
      figures: {
        'campaigns created in s': createSeconds,
        'first runs started': first.length,
        'first lag p50 s': percentile(first, 50),
        'first lag p99 s': percentile(first, 99),
        'first lag max s': Math.max(...first),
        "first runs in the burst's first second": firstSecond.length,
        "first lag p99 s, burst's first second": percentile(firstSecond, 99),
        'first lag p99 s, after it': percentile(afterFirstSecond, 99),
        'first runs: first message received p50 s (sandbox)': percentile(firstReceived, 50),
        'first runs: first message received p99 s (sandbox)': percentile(firstReceived, 99),
        'first run created after due p99 s': percentile(created, 99),
        'first run taken after created p99 s': percentile(taken, 99),
        'burst: sender jobs': burst.jobs,
        'burst: jobs waiting > 0.1 s for a slot': burst.jobs - burst.fast,
        'burst: job wait mean s': burst.waitSum / burst.jobs,
        'burst: job held its slot mean s': burst.heldSum / burst.heldCount,
        'burst: sender statements per job': burst.statements / burst.jobs,
        'burst: sender Redis commands per job (app, worker)': `${(burst.redisApp / burst.jobs).toFixed(2)}, ${(burst.redisWorker / burst.jobs).toFixed(2)}`,
        'sender jobs': total.jobs,
        'sender jobs waiting > 0.1 s for a slot': total.jobs - total.fast,
        'sender job wait mean s': total.waitSum / total.jobs,
        'sender job held its slot mean s': total.heldSum / total.heldCount,
        ...Object.fromEntries(
          await Promise.all(
            ['sent', 'deferred', 'lock-busy', 'stale-message'].map(async (o) => [
              `sender jobs ${o}`,
              await senderSum('metronome_job_outcomes_total', `outcome="${o}"`),
            ]),
          ),
        ),
        'later runs started': later.length,
        'later lag p50 s': percentile(later, 50),
        'later lag p99 s': percentile(later, 99),
        'later lag max s': Math.max(...later),
        'later runs created after due: p50 · p99 · max s': [50, 99, 100].map((q) => percentile(laterCreated, q).toFixed(3)).join(' · '),
        'later runs taken after created: p99 s': percentile(laterTaken, 99),
        'scheduler ticks: count · mean s (the whole run)': `${ticks.count} · ${(ticks.sum / ticks.count).toFixed(3)}`,
        'later runs created late (after scheduledAt)': laterCreated.filter((l) => l > 0).length,
        'later runs: first message received p50 s (sandbox)': percentile(laterReceived, 50),
        'later runs: first message received p99 s (sandbox)': percentile(laterReceived, 99),
        'messages received before scheduledAt (sandbox)': [...firstReceived, ...laterReceived].filter((l) => l < 0).length,
        'early starts': [...first, ...later].filter((l) => l < 0).length,
        ...(warmup > 0 && {
          'cold phase: first runs started': coldLags.length,
          'cold phase: first lag p50 s': percentile(coldLags, 50),
          'cold phase: first lag p99 s': percentile(coldLags, 99),
          'cold phase: early starts': coldLags.filter((l) => l < 0).length,
        }),
      },
    };
  });
}
