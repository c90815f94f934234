import pg from 'pg';
import { listRuns, createAccounts, createSpreadCampaigns, percentile, sandbox, withStack } from './common.mjs';

// The scheduling benchmark of issue 3: N interval campaigns (every 60 s, 5 chats each, own
// account, sandbox answering in 20 ms), first occurrences spread evenly over one interval, run
// for a few minutes on 1, 2 and 4 senders. Reports, per sender count:
// - start lag: run startedAt (its first job took the account) minus scheduledAt, and the first
//   delivery the sandbox received minus scheduledAt; early starts must be 0;
// - chats served early: sandbox receive times of one chat less than everySeconds apart, or
//   before the run's scheduledAt (must be 0), and how far per-chat deliveries slid per
//   occurrence (the cost of the strict per-chat gate);
// - scheduler statements and Redis commands per created run (counted inside the scheduler:
//   a Kysely plugin and a wrapper on its Redis connection, BEGIN/COMMIT not included), and all
//   services' PostgreSQL transactions per run (pg_stat_database.xact_commit of the scratch DB);
// - scheduler CPU per leading tick (process.cpuUsage around each tick, a histogram).
export async function scheduling(env) {
  const senderCounts = env.quick ? [1, 2] : [1, 2, 4];
  const figures = {};
  const params = {
    campaigns: env.quick ? 100 : 1000,
    chatsPerCampaign: 5,
    everySeconds: 60,
    minutes: env.quick ? 1.5 : 3,
    senders: senderCounts,
    sandboxLatencyMs: 20,
    tickMs: 1000,
  };
  const detail = {};
  for (const senders of senderCounts) {
    const r = await oneRun(env, { ...params, senders });
    detail[senders] = r;
    for (const [k, v] of Object.entries(r)) figures[`${senders}s ${k}`] = v;
  }
  return { params, figures, detail };
}

async function oneRun(env, p) {
  return withStack(
    env,
    {
      senders: p.senders,
      sandboxEnv: { SANDBOX_LATENCY_MS: String(p.sandboxLatencyMs) },
      schedulerEnv: { SCHEDULER_TICK_MS: String(p.tickMs) },
      senderEnv: { DEFAULT_MAX_SEND_PER_MINUTE: '600' },
    },
    async ({ stack, token, db }) => {
      const accs = await createAccounts(stack, token, p.campaigns, {});
      const base = Date.now() + 15_000;
      await createSpreadCampaigns(stack, token, accs, { everySeconds: p.everySeconds, chatsPerCampaign: p.chatsPerCampaign, firstAt: base });
      const schedulerMetrics = `http://127.0.0.1:${stack.schedulerMetricsPort}/metrics`;
      const before = { ...(await scrape(schedulerMetrics)), xacts: await dbTransactions(db.url) };
      await new Promise((r) => setTimeout(r, Math.max(0, base - Date.now()) + p.minutes * 60_000));
      const after = { ...(await scrape(schedulerMetrics)), xacts: await dbTransactions(db.url) };

      const runs = await listRuns(stack, token);
      const byId = new Map(runs.map((r) => [r.id, r]));
      const started = runs.filter((r) => r.startedAt);
      const lags = started.map((r) => (Date.parse(r.startedAt) - Date.parse(r.scheduledAt)) / 1000);

      // What each chat received, from the sandbox.
      const { items } = await sandbox(stack, '/sandbox/messages');
      const firstDelivery = new Map();
      const perChat = new Map();
      let beforeScheduled = 0;
      for (const m of items) {
        const runId = m.idempotencyKey.split(':')[0];
        const run = byId.get(runId);
        if (!run) continue;
        const lagMs = m.receivedAt - Date.parse(run.scheduledAt);
        if (lagMs < 0) beforeScheduled++;
        firstDelivery.set(runId, Math.min(firstDelivery.get(runId) ?? Infinity, m.receivedAt));
        const key = `${m.account}/${m.chatId}`;
        if (!perChat.has(key)) perChat.set(key, []);
        perChat.get(key).push({ at: m.receivedAt, lagMs });
      }
      let earlyChats = 0;
      let earlyGaps = 0;
      let minGap = Infinity;
      const slide = [];
      for (const list of perChat.values()) {
        list.sort((a, b) => a.at - b.at);
        let early = list.some((d) => d.lagMs < 0);
        for (let i = 1; i < list.length; i++) {
          const gap = list[i].at - list[i - 1].at;
          minGap = Math.min(minGap, gap);
          if (gap < p.everySeconds * 1000) {
            earlyGaps++;
            early = true;
          }
        }
        if (early) earlyChats++;
        if (list.length > 1) slide.push((list[list.length - 1].lagMs - list[0].lagMs) / (list.length - 1));
      }
      const firstLags = [...firstDelivery].map(([id, at]) => (at - Date.parse(byId.get(id).scheduledAt)) / 1000);

      const created = runs.length;
      const ticks = after.tickCount - before.tickCount;
      return {
        runs: created,
        'runs started': started.length,
        'start lag p50 s': percentile(lags, 50),
        'start lag p95 s': percentile(lags, 95),
        'start lag p99 s': percentile(lags, 99),
        'start lag max s': Math.max(...lags),
        'early starts': lags.filter((l) => l < 0).length,
        'first delivery lag p50 s': percentile(firstLags, 50),
        'first delivery lag p99 s': percentile(firstLags, 99),
        'first delivery lag max s': Math.max(...firstLags),
        deliveries: items.length,
        'chats served early': earlyChats,
        'deliveries before scheduledAt': beforeScheduled,
        'early gaps (< every)': earlyGaps,
        'smallest gap per chat s': minGap === Infinity ? null : minGap / 1000,
        'per-chat slide per occurrence mean ms': slide.length ? slide.reduce((a, b) => a + b, 0) / slide.length : null,
        'per-chat slide per occurrence max ms': slide.length ? Math.max(...slide) : null,
        'scheduler statements per run': (after.statements - before.statements) / created,
        'scheduler redis commands per run': (after.redis - before.redis) / created,
        'all services pg transactions per run': (after.xacts - before.xacts) / created,
        'scheduler ticks': ticks,
        'scheduler statements per tick': (after.statements - before.statements) / ticks,
        'scheduler cpu per tick mean ms': ((after.tickCpuSum - before.tickCpuSum) / ticks) * 1000,
        'scheduler cpu per tick p99 ms (bucket bound)': bucketPercentile(before.tickCpuBuckets, after.tickCpuBuckets, 99) * 1000,
      };
    },
  );
}

async function scrape(url) {
  const text = await (await fetch(url)).text();
  const value = (name) => {
    let sum = 0;
    for (const line of text.split('\n')) {
      const m = /^(\S+?)(\{[^}]*\})? (\S+)$/.exec(line);
      if (m && m[1] === name) sum += Number(m[3]);
    }
    return sum;
  };
  const buckets = [];
  for (const line of text.split('\n')) {
    const m = /^metronome_scheduler_tick_cpu_seconds_bucket\{.*le="([^"]+)".*\} (\S+)$/.exec(line);
    if (m) buckets.push([m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2])]);
  }
  return {
    statements: value('metronome_scheduler_db_statements_total'),
    redis: value('metronome_scheduler_redis_commands_total'),
    tickCount: value('metronome_scheduler_tick_cpu_seconds_count'),
    tickCpuSum: value('metronome_scheduler_tick_cpu_seconds_sum'),
    tickCpuBuckets: buckets,
  };
}

/** The upper bound of the bucket holding the p-th percentile of the observations between two scrapes. */
function bucketPercentile(before, after, p) {
  const deltas = after.map(([le, n], i) => [le, n - (before[i]?.[1] ?? 0)]);
  const total = deltas[deltas.length - 1]?.[1] ?? 0;
  if (!total) return null;
  return deltas.find(([, n]) => n >= (p / 100) * total)?.[0] ?? null;
}

async function dbTransactions(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Stats are flushed by each backend at most once a second; the error is a few transactions.
    const r = await client.query('select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()');
    return Number(r.rows[0].n);
  } finally {
    await client.end();
  }
}
