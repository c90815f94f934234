import { randomBytes } from 'node:crypto';
import { openSync, readSync, statSync } from 'node:fs';
import pg from 'pg';
import { createScratchDatabase, scrapeSum, startStack } from '@metronome/testkit';
import { call, createAccounts, sendersCpu } from './common.mjs';
import { filledTemplate, HISTORY_TOKEN_HASH, KEEP_ALL } from './history.mjs';
import { phase } from './throughput.mjs';

// Sending beside the retention sweep (issue 35: "while the sweep deletes millions of rows, a
// throughput run beside it keeps ≥ 0.9 of its figure and no send waits on a lock for more than
// 100 ms"). Each turn clones the filled history template (history.mjs) and starts the stack on
// it: in a "sweep" turn with the default retention (90 days of a 400-day history: about three
// quarters of the runs lose their targets and events), so the scheduler's sweep starts with
// the stack; in an "alone" turn with retention past the history (no sweep). The turns alternate
// (alone, sweep, alone, sweep) so the machine's load weighs on both alike. Each turn sends a
// cold phase, then the measured pass of throughput.mjs. Lock waits are PostgreSQL's own: every
// 10 ms pg_locks is read for ungranted locks of the turn's database (`waitstart`: when the wait
// began), and the database logs every wait past 100 ms (log_lock_waits, deadlock_timeout).
const SAMPLE_MS = 10;
const LOG = '/var/log/postgresql/postgresql-15-main.log';

export async function historySweep(env) {
  const runs = env.quick ? 20_000 : Number(process.env.BENCH_HISTORY_RUNS ?? 1_000_000);
  const accountsPerPass = env.quick ? 20 : 100;
  const template = await filledTemplate(env.databaseUrl, runs, HISTORY_TOKEN_HASH);
  const turns = [];
  for (const label of ['alone', 'sweep', 'alone', 'sweep']) {
    process.stdout.write(`  ${label}…\n`);
    turns.push({ label, ...(await turn(env, template, label === 'sweep', accountsPerPass, turns.length)) });
  }
  const of = (label) => turns.filter((t) => t.label === label);
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const sends = (label) => of(label).map((t) => t.sendsPerSecond);
  const sweep = of('sweep');
  return {
    params: {
      runs,
      accountsPerPass,
      retentionBatch: Number(process.env.RETENTION_BATCH ?? 1000),
      retentionPauseMs: Number(process.env.RETENTION_PAUSE_MS ?? 300),
      sampleMs: SAMPLE_MS,
      turns: turns.map((t) => t.label),
    },
    figures: {
      'history runs': runs,
      'sends/s alone': sends('alone').map(Math.round).join(' · '),
      'sends/s beside the sweep': sends('sweep').map(Math.round).join(' · '),
      'sends/s ratio (goal ≥ 0.9)': mean(sends('sweep')) / mean(sends('alone')),
      'rows the sweep deleted during the measured pass': sweep.map((t) => t.sweptDuringPass).join(' · '),
      'sweep rows/s during the measured pass': sweep.map((t) => Math.round(t.sweptPerSecond)).join(' · '),
      'longest lock wait of a sender statement ms, beside the sweep (goal ≤ 100)': Math.max(...sweep.map((t) => t.locks.longestSenderMs)),
      'longest lock wait of a sender statement ms, alone': Math.max(...of('alone').map((t) => t.locks.longestSenderMs)),
      'longest lock wait of a sender statement on rows or tables ms, beside the sweep': Math.max(...sweep.map((t) => t.locks.longestSenderNotNotifyMs)),
      'longest lock wait of any statement ms, beside the sweep': Math.max(...sweep.map((t) => t.locks.longestMs)),
      'longest lock wait of any statement ms, alone': Math.max(...of('alone').map((t) => t.locks.longestMs)),
      'waits past 100 ms PostgreSQL logged, beside the sweep': sweep.reduce((n, t) => n + t.locks.loggedPast100ms, 0),
      'waits past 100 ms PostgreSQL logged, alone': of('alone').reduce((n, t) => n + t.locks.loggedPast100ms, 0),
    },
    turns,
  };
}

async function turn(env, template, withSweep, accountsPerPass, n) {
  const db = await createScratchDatabase(env.databaseUrl, 'history_sweep', template);
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  // every lock wait past 100 ms is logged by the server, for this database only
  await admin.query(`alter database "${db.name}" set log_lock_waits = on`);
  await admin.query(`alter database "${db.name}" set deadlock_timeout = '100ms'`);
  const logFrom = statSync(LOG).size;
  const sampler = lockSampler(admin, db.name);
  const stack = await startStack({
    databaseUrl: db.url,
    redisUrl: env.redisUrl,
    keyPrefix: `bench-${randomBytes(4).toString('hex')}`,
    senders: 2,
    senderEnv: { SENDER_CONCURRENCY: '32' },
    apiEnv: { API_RATE_LIMIT_PER_MINUTE: '1000000' },
    // a pass every second (the default is a minute, and the first pass comes one interval after
    // the start, as the scheduler leads only after its first tick): the sweep starts with the turn
    schedulerEnv: { RETENTION_SWEEP_MS: '1000', ...(withSweep ? {} : KEEP_ALL) },
  });
  try {
    const swept = () => scrapeSum(`http://127.0.0.1:${stack.schedulerMetricsPort}/metrics`, 'metronome_retention_deleted_rows_total');
    const { token } = await call(stack, 'POST', '/v1/tenants', stack.adminToken, { name: `bench-${n}` });
    const accounts = await createAccounts(stack, token, 40 + accountsPerPass, { maxSendPerMinute: 60_000, groupConcurrency: 10 }, `acc${n}`);
    const cpu = () => sendersCpu(stack);
    await phase(stack, token, accounts.slice(0, 40), `w${n}-`, cpu);
    const [sweptBefore, startedAt] = [await swept(), Date.now()];
    const sending = await phase(stack, token, accounts.slice(40), `p${n}-`, cpu);
    const sweptDuringPass = (await swept()) - sweptBefore;
    const senderPids = (await admin.query(`select pid from pg_stat_activity where datname = $1 and application_name = 'metronome-sender'`, [db.name])).rows.map(
      (r) => r.pid,
    );
    const waits = await sampler.stop();
    const logged = loggedWaits(logFrom, db.name);
    const longest = (ws) => Math.max(0, ...ws.map((w) => w.ms));
    const ofSenders = waits.filter((w) => w.app === 'metronome-sender' || senderPids.includes(w.pid));
    return {
      sendsPerSecond: sending.sendsPerSecond,
      cpuMsPerSend: sending.cpuMsPerSend,
      sweptDuringPass,
      sweptPerSecond: sweptDuringPass / ((Date.now() - startedAt) / 1000),
      sweptInTurn: await swept(),
      locks: {
        longestMs: longest(waits),
        longestSenderMs: longest(ofSenders),
        // a commit that notifies waits for the one before it to finish (PostgreSQL serialises
        // NOTIFY at commit: an object lock on pg_database 0); every other wait is on rows or tables
        longestSenderNotNotifyMs: longest(ofSenders.filter((w) => !isNotifyLock(w))),
        past100ms: waits.filter((w) => w.ms > 100).length,
        loggedPast100ms: logged.length,
        loggedOfSenders: logged.filter((l) => senderPids.includes(l.pid)).length,
        worst: waits.sort((a, b) => b.ms - a.ms).slice(0, 5),
      },
    };
  } finally {
    await sampler.stop();
    await stack.stop().catch((e) => console.error(e.message));
    await admin.end();
    await db.drop();
  }
}

/**
 * Reads the database's ungranted locks every SAMPLE_MS until stopped; each wait (a backend and
 * the moment its wait began) with the longest time it was seen waiting, its application and
 * statement.
 */
function lockSampler(client, datname) {
  const waits = new Map();
  let running = true;
  const loop = (async () => {
    while (running) {
      const rows = (
        await client.query(
          `select l.pid, a.application_name as app, l.locktype, l.mode, l.waitstart,
                  coalesce(l.relation::regclass::text, l.classid::regclass::text || ' ' || l.objid, l.transactionid::text) as target, extract(epoch from clock_timestamp() - l.waitstart) * 1000 as ms, left(a.query, 120) as query
             from pg_locks l join pg_stat_activity a on a.pid = l.pid
            where not l.granted and a.datname = $1 and l.waitstart is not null`,
          [datname],
        )
      ).rows;
      for (const r of rows) {
        const key = `${r.pid}@${r.waitstart.toISOString()}`;
        const seen = waits.get(key);
        if (!seen || seen.ms < r.ms)
          waits.set(key, { pid: r.pid, app: r.app, locktype: r.locktype, mode: r.mode, target: r.target, ms: Math.round(Number(r.ms)), query: r.query });
      }
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    }
  })();
  let stopped = null;
  return {
    stop: () => {
      running = false;
      stopped ??= loop.then(() => [...waits.values()]);
      return stopped;
    },
  };
}

const isNotifyLock = (w) => w.locktype === 'object' && w.target === 'pg_database 0';

/** The server's "still waiting" lines (log_lock_waits) for `datname` since `from` bytes into its log, with their pid. */
function loggedWaits(from, datname) {
  const size = statSync(LOG).size;
  if (size <= from) return [];
  const buf = Buffer.alloc(size - from);
  readSync(openSync(LOG, 'r'), buf, 0, buf.length, from);
  return buf
    .toString()
    .split('\n')
    .filter((l) => l.includes(`@${datname} `) && l.includes('still waiting for'))
    .map((l) => ({ pid: Number(/\[(\d+)\]/.exec(l)?.[1]), line: l.slice(0, 200) }));
}
