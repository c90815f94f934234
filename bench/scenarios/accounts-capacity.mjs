import pg from 'pg';
import { createRedis } from '@metronome/redis';
import { eventually } from '@metronome/testkit';
import { cpuSeconds } from '../probe-process.mjs';
import { traceDump, traceReset } from '../probes/trace-control.mjs';
import { call, withStack } from './common.mjs';
import { besideCpuSeconds, countedServer, holderPids, senderSet, sessionBundle, stopSummary, wireSenderEnv } from './accounts-capacity-wire.mjs';

// Always-connected WhatsApp accounts (issue 53): N accounts moved in by session import, then 2
// sender processes; the real Baileys in each connects to @openclaw/crabline's WhatsApp Web server
// (WHATSAPP_WS_URL) behind a TCP relay counting the sockets open at the server. Per size: time to
// all connected; per sender RSS, heap and CPU idle, then with every account sending 20 messages a
// minute to direct chats (the server's accepted messages, decrypted, by time); a kill -9 of the
// sender holding the most during the sends (time until each of its accounts has a message
// accepted again); a rolling restart (SIGTERM one, start it again, then the other); duplicates
// (a message accepted twice) and `unknown` targets; then a 3rd sender (spread) and a 4th (its
// share by hand-over). BENCH_ACCOUNTS=100,500 picks the sizes.
const IDLE_MS = 30_000;
const SENDING_MS = 30_000;
const CONNECTS_PER_SECOND = 25;
const PER_MINUTE = 20;
/**
 * Each account sends PARTS texts to each of its CHATS chats (15 minutes at 20 a minute: the runs outlast the kill and both
 * restarts, each with up to 3 minutes for the spread to come back: with 12 chats, 6 minutes, the last step found runs done). The chats come from a pool of at most RECIPIENTS people shared by the accounts, within the server's Signal
 * store (crabline-capacity-hooks.mjs: 8,192 identities, the accounts' own included).
 */
const CHATS = 30;
const PARTS = 10;
const RECIPIENTS = 4_000;
const AGAIN_BOUND_MS = 180_000;

export async function accountsCapacity(env) {
  const sizes = env.quick ? [20] : (process.env.BENCH_ACCOUNTS ?? '100,500,1000').split(',').map(Number);
  const figures = {};
  for (const n of sizes) Object.assign(figures, await oneSize(env, n));
  return {
    params: {
      sizes,
      senders: 2,
      idleSeconds: IDLE_MS / 1000,
      connectsPerSecond: CONNECTS_PER_SECOND,
      senderConcurrency: 'the default: 128, and one slot per account held',
      perMinute: PER_MINUTE,
      chats: CHATS,
      server: '@openclaw/crabline',
    },
    figures,
  };
}

const phoneOf = (i) => `6015${String(i).padStart(7, '0')}`;
const textOf = (i, p) => `Hello from account ${i}, part ${p}`;
/** the account a message came from, by its text */
const accountOf = (key) => Number(/from account (\d+),/.exec(key)?.[1] ?? -1);
const mb = (b) => b / 1024 / 1024;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** the values at quantiles `qs`, s with one decimal, as "a / b / c" */
const quantiles = (xs, qs = [0.1, 0.5, 0.9, 1]) => {
  const t = [...xs].sort((a, b) => a - b);
  return t.length ? qs.map((q) => t[Math.floor(q * (t.length - 1))].toFixed(1)).join(' / ') : 'none';
};

async function oneSize(env, n) {
  const pool = Math.min(RECIPIENTS, n * CHATS);
  const chatOf = (i, c) => `6019${String((i * CHATS + c) % pool).padStart(8, '0')}@s.whatsapp.net`;
  const wa = await countedServer();
  const redis = createRedis(env.redisUrl, 'bench-accounts-capacity');
  let senders;
  const cleanups = [];
  const out = {};
  // each figure printed as it is measured: a size that fails later keeps what it measured in the log
  const f = (k, v) => {
    out[`${n} accounts: ${k}`] = v;
    process.stderr.write(`  ${n} accounts: ${k}: ${v}\n`);
  };
  try {
    await withStack(env, { senders: 0, env: { WHATSAPP_WS_URL: wa.url } }, async ({ stack, token, db, keyPrefix }) => {
      const ids = [];
      for (let i = 0; i < n; i += 20) {
        const batch = Array.from({ length: Math.min(20, n - i) }, async (_, k) => {
          const body = { platform: 'whatsapp', name: `wa-${i + k}`, sendDelaySeconds: null, typing: null, maxSendPerMinute: PER_MINUTE };
          const acc = await call(stack, 'POST', '/v1/accounts', token, body);
          await call(stack, 'POST', `/v1/accounts/${acc.id}/session`, token, sessionBundle(phoneOf(i + k)));
          return acc.id;
        });
        ids.push(...(await Promise.all(batch)));
      }
      const pgc = new pg.Client({ connectionString: db.url });
      await pgc.connect();
      // the stack's end drops the database under it
      pgc.on('error', () => undefined);
      cleanups.push(() => pgc.end());
      senders = senderSet(
        wireSenderEnv(
          { db, redisUrl: env.redisUrl, keyPrefix, wa, stack, connectsPerSecond: CONNECTS_PER_SECOND },
          {
            // debug: each job's end and each hand-over in BENCH_LOG_DIR's logs (their cost is in the figures)
            ...(process.env.BENCH_SENDER_LOG_LEVEL && { LOG_LEVEL: process.env.BENCH_SENDER_LOG_LEVEL }),
            // e.g. --import=./bench/probes/connect-trace.mjs with PROBE_TRACE_DIR: each account's phases after a kill
            ...(process.env.BENCH_SENDER_NODE_OPTIONS && { NODE_OPTIONS: process.env.BENCH_SENDER_NODE_OPTIONS }),
          },
        ),
      );
      const live = () => [...senders.live.values()];
      const socketsOf = async (xs) => (await Promise.all(xs.map(senders.sockets))).reduce((a, b) => a + b, 0);
      const allConnected = async () => (await socketsOf(live())) === n && wa.count.open === n;
      const mostBefore = wa.count.most;
      await wa.resetMost();

      /** seconds from `since` until every live sender holds within ±20 % of an even share, and the shares */
      const evenWithin = async (since, boundMs) => {
        const counts = async () => {
          const p = await holderPids(redis, keyPrefix, ids);
          return live().map((x) => p.filter((q) => q === x.pid).length);
        };
        const k = () => senders.live.size;
        const even = async () => (await counts()).every((c) => Math.abs(c - n / k()) <= 0.2 * (n / k())) && (await allConnected());
        const ok = await eventually(`${k()} senders within ±20 % of even`, even, boundMs, 1_000).then(
          () => true,
          () => false,
        );
        const s = ok ? (Date.now() - since) / 1000 : `not within ${boundMs / 1000} s`;
        return { s, counts: (await counts()).join(' / ') };
      };
      const unknownTargets = async () => (await pgc.query(`select count(*)::int n from run_targets where status = 'unknown'`)).rows[0].n;
      /** the stops so far (a kill, each SIGTERM): an unknown target is the first stop's after its request began */
      const stops = [];
      /** the unknown targets by the stop they came from, their code, and whether the server had every part of them */
      const unknownCauses = async () => {
        const { rows } = await pgc.query(
          `select t.chat_id, t.error_code, t.send_started_at, c.messages from run_targets t
           join runs r on r.id = t.run_id join campaigns c on c.id = r.campaign_id where t.status = 'unknown'`,
        );
        const causes = {};
        for (const r of rows) {
          const texts = (typeof r.messages === 'string' ? JSON.parse(r.messages) : r.messages).map((m) => m.text);
          const atServer = texts.every((t) => wa.accepted.has(`${r.chat_id}|${t}`)) ? 'every part at the server' : 'a part not at the server';
          const began = r.send_started_at ? new Date(r.send_started_at).getTime() : 0;
          const stop = stops.find((x) => x.at >= began)?.name ?? 'no stop';
          const k = `${stop}: ${r.error_code} (${atServer})`;
          causes[k] = (causes[k] ?? 0) + 1;
        }
        return causes;
      };

      const started = Date.now();
      await Promise.all(['sender-1', 'sender-2'].map(senders.start));
      const bound = 60_000 + (n / CONNECTS_PER_SECOND) * 3_000;
      if (
        !(await eventually(`${n} accounts connected`, allConnected, bound, 250).then(
          () => true,
          () => false,
        ))
      ) {
        f('connected after the senders start s', `not within ${bound / 1000} s: ${await socketsOf(live())} of ${n}`);
        return;
      }
      f('connected after the senders start s', (Date.now() - started) / 1000);
      f('most sockets open during the imports', mostBefore);
      const spread = await evenWithin(started, 120_000);
      f('2 senders: within ±20 % of even after they start s', spread.s);

      /** per sender: CPU % of a core over `ms`, then RSS and heap, and the accounts it holds */
      const window = async (what, ms) => {
        const xs = live();
        const held = await Promise.all(xs.map(senders.sockets));
        const cpu0 = xs.map((x) => cpuSeconds(x.pid));
        const beside0 = besideCpuSeconds(wa.pid);
        // prom-client's event-loop delay histogram restarts at each scrape: this one closes the window's
        await Promise.all(xs.map((x) => senders.metric(x, 'nodejs_eventloop_lag_max_seconds')));
        await sleep(ms);
        const lag = await Promise.all(xs.map((x) => senders.metric(x, 'nodejs_eventloop_lag_max_seconds')));
        const cpu = xs.map((x, i) => (100 * (cpuSeconds(x.pid) - cpu0[i])) / (ms / 1000));
        const beside = Object.entries(besideCpuSeconds(wa.pid)).map(([k, v]) => `${k} ${((100 * (v - beside0[k])) / (ms / 1000)).toFixed(1)}`);
        const rss = await Promise.all(xs.map((x) => senders.metric(x, 'process_resident_memory_bytes')));
        const heap = await Promise.all(xs.map((x) => senders.metric(x, 'nodejs_heap_size_used_bytes')));
        f(`${what}: accounts held per sender`, held.join(' / '));
        f(`${what}: RSS per sender MB`, rss.map((b) => mb(b).toFixed(0)).join(' / '));
        f(`${what}: RSS per held account MB`, Math.max(...rss.map((b, i) => mb(b) / Math.max(1, held[i]))));
        f(`${what}: heap per sender MB`, heap.map((b) => mb(b).toFixed(0)).join(' / '));
        f(`${what}: CPU per sender % of a core`, cpu.map((c) => c.toFixed(1)).join(' / '));
        f(`${what}: CPU beside the senders % of a core`, beside.join(' / '));
        f(`${what}: longest event-loop delay per sender ms`, lag.map((v) => (v * 1000).toFixed(0)).join(' / '));
        f(`${what}: CPU per 1,000 accounts % of a core`, (cpu.reduce((a, b) => a + b, 0) * 1000) / n);
      };
      await window('idle', IDLE_MS);

      // every account sends to its own direct chats at 20 a minute
      const runs = [];
      for (let i = 0; i < n; i += 20) {
        const batch = ids.slice(i, i + 20).map(async (accountId, k) => {
          const c = await call(stack, 'POST', '/v1/campaigns', token, {
            accountId,
            name: `to my chats ${i + k}`,
            timezone: 'UTC',
            schedule: { type: 'once', at: new Date().toISOString() },
            messages: Array.from({ length: PARTS }, (_, p) => ({ type: 'text', text: textOf(i + k, p) })),
            targets: Array.from({ length: CHATS }, (_, c) => chatOf(i + k, c)),
            active: false,
          });
          return (await call(stack, 'POST', `/v1/campaigns/${c.id}/runs`, token)).id;
        });
        runs.push(...(await Promise.all(batch)));
      }
      /** the accounts with a message accepted at the server since `since` */
      const sentSince = (since) => {
        const seen = new Set();
        for (const [key, times] of wa.accepted) if (times.some((t) => t >= since)) seen.add(accountOf(key));
        return seen;
      };
      const acceptedCount = () => [...wa.accepted.values()].reduce((a, t) => a + t.length, 0);
      /**
       * ms from `since` until every account of `accounts` had a message accepted at `from` or later (`since` unless told: a
       * SIGTERM's step counts from the stopped sender's exit, so what it sent while draining is not "again"), or a text saying how far it got
       */
      const againAfter = async (since, accounts, what, from = since) => {
        const all = async () => {
          const seen = sentSince(from);
          return accounts.every((i) => seen.has(i));
        };
        const ok = await eventually(what, all, AGAIN_BOUND_MS, 250).then(
          () => true,
          () => false,
        );
        if (!ok) {
          const seen = sentSince(from);
          againQuantiles = 'not all sending';
          return `not within ${AGAIN_BOUND_MS / 1000} s: ${accounts.filter((i) => seen.has(i)).length} of ${accounts.length}`;
        }
        const first = new Map();
        for (const [key, times] of wa.accepted) {
          const i = accountOf(key);
          for (const t of times) if (t >= from && t < (first.get(i) ?? Infinity)) first.set(i, t);
        }
        firstSent = new Map(accounts.map((i) => [i, (first.get(i) - since) / 1000]));
        againQuantiles = quantiles(firstSent.values(), [0.1, 0.5, 0.9]);
        return Math.max(...firstSent.values());
      };
      /** 10th, 50th, 90th percentile and last time, s, at which `accounts`' socket leases name a sender other than `pid` */
      const socketsMoved = async (since, accounts, pid) => {
        const at = new Map();
        while (at.size < accounts.length && Date.now() - since < AGAIN_BOUND_MS) {
          const pids = await holderPids(
            redis,
            keyPrefix,
            accounts.map((i) => ids[i]),
          );
          pids.forEach((p, k) => p && p !== pid && !at.has(accounts[k]) && at.set(accounts[k], (Date.now() - since) / 1000));
          await sleep(250);
        }
        movedAt = at;
        if (at.size < accounts.length) return `${at.size} of ${accounts.length} within ${AGAIN_BOUND_MS / 1000} s`;
        return quantiles(at.values());
      };
      /** the last againAfter's 10th, 50th and 90th percentile, s: whether the whole share or a tail waited */
      let againQuantiles = '';
      /** the last againAfter's s to each account's first message, and the last socketsMoved's s to each account's socket moving */
      let firstSent = new Map();
      let movedAt = new Map();
      const sendingFrom = Date.now();
      const everyone = ids.map((_, i) => i);
      f('sending: every account sending after its run is created s', await againAfter(sendingFrom, everyone, 'every account sending'));
      const opened0 = wa.count.opened;
      const accepted0 = acceptedCount();
      await window('sending', SENDING_MS);
      f('sending: messages accepted at the server a second', (acceptedCount() - accepted0) / (SENDING_MS / 1000));
      f('sending: sockets opened while sending', wa.count.opened - opened0);

      // kill -9 the sender holding the most while every account sends
      const pids = await holderPids(redis, keyPrefix, ids);
      const [victim] = live().sort((a, b) => pids.filter((p) => p === b.pid).length - pids.filter((p) => p === a.pid).length);
      const victims = ids.map((_, i) => i).filter((i) => pids[i] === victim.pid);
      await traceReset(live());
      const killed = Date.now();
      stops.push({ name: 'kill -9', at: killed });
      await senders.stop(victim.name, 'SIGKILL');
      const moved = socketsMoved(killed, victims, victim.pid);
      f(
        `kill -9 of the sender holding ${victims.length}: all its accounts sending again s`,
        await againAfter(killed, victims, 'the killed sender’s accounts sending again'),
      );
      f('kill -9: 10 / 50 / 90 / 100 % of its accounts connected on the other s', await moved);
      f('kill -9: 10 / 50 / 90 % of its accounts sending again s', againQuantiles);
      // one account's wait on its new holder: its first message after its socket moved
      f(
        'kill -9: 10 / 50 / 90 / 100 % of its accounts from socket moved to sending s',
        quantiles([...movedAt].filter(([i]) => firstSent.has(i)).map(([i, at]) => firstSent.get(i) - at)),
      );
      await traceDump(live(), `${n}-kill`);
      f('kill -9: unknown targets (what was in flight)', await unknownTargets());
      const restarted = Date.now();
      await senders.start(victim.name);
      f('kill -9: the restarted sender has its share (±20 %) s', (await evenWithin(restarted, 180_000)).s);

      // rolling restart: SIGTERM one, start it again, then the other
      for (const [step, name] of [...senders.live.keys()].sort().entries()) {
        const stepAt = Date.now();
        const pidsNow = await holderPids(redis, keyPrefix, ids);
        const itsAccounts = ids.map((_, i) => i).filter((i) => pidsNow[i] === senders.live.get(name).pid);
        await traceReset(live());
        const openedBefore = wa.count.opened;
        stops.push({ name: `SIGTERM ${step + 1}`, at: Date.now() });
        f(`rolling restart step ${step + 1}: its stop`, stopSummary((await senders.stop(name, 'SIGTERM')).output));
        const exited = Date.now();
        await senders.start(name);
        f(
          `rolling restart step ${step + 1}: its ${itsAccounts.length} accounts sending again after its exit, from its SIGTERM s`,
          await againAfter(stepAt, itsAccounts, `step ${step + 1}`, exited),
        );
        f(`rolling restart step ${step + 1}: 10 / 50 / 90 % of its accounts sending again s`, againQuantiles);
        await traceDump(live(), `${n}-step${step + 1}`);
        f(`rolling restart step ${step + 1}: both senders within ±20 % of even s`, (await evenWithin(stepAt, 180_000)).s);
        // each account moved once opens one socket: more is an account moved twice (to the other sender, then back)
        f(
          `rolling restart step ${step + 1}: sockets opened at the server until even, for its accounts`,
          `${wa.count.opened - openedBefore} for ${itsAccounts.length}`,
        );
      }
      const causes = Object.entries(await unknownCauses());
      f(
        'rolling restart: unknown targets from its stops',
        causes.filter(([k]) => k.startsWith('SIGTERM')).reduce((a, [, c]) => a + c, 0),
      );
      f('most sockets open at the server at once', wa.count.most);

      // the runs end: duplicates and unknowns as the server and PostgreSQL have them
      const refused = [];
      for (let i = 0; i < runs.length; i += 20)
        await Promise.all(
          runs
            .slice(i, i + 20)
            .map((id) => call(stack, 'POST', `/v1/runs/${id}/cancel`, token).catch((e) => /→ 409 /.test(e.message) || refused.push(e.message))),
        );
      // a 409 is a run that already ended
      if (refused.length) f('cancels refused', `${refused.length}: ${refused[0]}`);
      const stillOpen = async () => (await pgc.query(`select status, count(*)::int n from runs where status in ('queued','running') group by 1`)).rows;
      const ended = await eventually('the runs ended', async () => (await stillOpen()).length === 0, 120_000, 500).then(
        () => true,
        () => false,
      );
      if (!ended) f('runs still open 120 s after their cancel', JSON.stringify(await stillOpen()));
      f(`targets sent in all (${PARTS} parts each)`, (await pgc.query(`select count(*)::int n from run_targets where status = 'sent'`)).rows[0].n);
      f('messages accepted twice (duplicates)', [...wa.accepted.values()].filter((t) => t.length > 1).length);
      f('unknown targets', await unknownTargets());
      f('unknown targets by cause', JSON.stringify(await unknownCauses()));

      // spread: a 3rd sender, then a 4th, each by hand-over
      for (const name of ['sender-3', 'sender-4']) {
        const joined = Date.now();
        await senders.start(name);
        const k = senders.live.size;
        const { s: took, counts } = await evenWithin(joined, 240_000);
        f(`${k} senders: within ±20 % of even after the ${k === 3 ? '3rd' : '4th'} starts s`, took);
        f(`${k} senders: accounts per sender`, counts);
      }
      f('most sockets open at the server at once, spread included', wa.count.most);
    });
  } finally {
    await senders?.stopAll();
    for (const c of cleanups) await c().catch(() => undefined);
    await redis.quit();
    await wa.close();
  }
  return out;
}
