// Where a WhatsApp connect's time goes when many open at once in one sender (issue 53).
//   node bench/probes/connect-burst.mjs [N ...]      (default: 25 250)
// Per N: a fresh stack, N linked devices imported (the real Baileys against @openclaw/crabline, as accounts-capacity), then
// one sender; connect-trace.mjs, loaded into it, times each connect's phases and profiles its CPU. Two ways to open N at once:
// - PROBE_MODE=holder (default): always-connected accounts and a connect pace of 1,000 a second, so the account holder opens
//   them all at once (at most its MAX_OPENING at a time);
// - PROBE_MODE=jobs: on_demand accounts, each with a run of one message due at one instant: their jobs connect them, as a
//   survivor's jobs do after a kill -9. PROBE_SENDING=M first has M always-connected accounts sending 20 a minute each.
// Prints per phase the 10/50/90 % and the longest (ms), the CPU of the sender, the server and PostgreSQL, the database and
// Redis round trips, and the sender's busiest functions and packages while connecting. PROBE_ENV='{"K":"V"}' adds to the
// sender's environment (e.g. {"ACCOUNT_CONNECTS_PER_SECOND":"25"}).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from '@metronome/testkit';
import { cpuSeconds } from '../probe-process.mjs';
import { call, withStack } from '../scenarios/common.mjs';
import { besideCpuSeconds, countedServer, senderSet, sessionBundle, wireSenderEnv } from '../scenarios/accounts-capacity-wire.mjs';

const env = {
  databaseUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/metronome',
  redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
};
const sizes = process.argv.slice(2).map(Number).filter(Boolean);
const mode = process.env.PROBE_MODE ?? 'holder';
const sending = Number(process.env.PROBE_SENDING ?? 0);
const trace = fileURLToPath(new URL('./connect-trace.mjs', import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const phoneOf = (i) => `6015${String(i).padStart(7, '0')}`;
const chatOf = (i, c) => `6019${String(i * 30 + c).padStart(8, '0')}@s.whatsapp.net`;

for (const n of sizes.length ? sizes : [25, 250]) await burst(n);
process.exit(0);

/** `count` accounts from index `from`, their sessions imported; their ids */
async function accounts(stack, token, from, count, extra) {
  const ids = [];
  for (let i = from; i < from + count; i += 20)
    ids.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(20, from + count - i) }, async (_, k) => {
          const body = { platform: 'whatsapp', name: `wa-${i + k}`, sendDelaySeconds: null, typing: null, maxSendPerMinute: 20, ...extra };
          const acc = await call(stack, 'POST', '/v1/accounts', token, body);
          await call(stack, 'POST', `/v1/accounts/${acc.id}/session`, token, sessionBundle(phoneOf(i + k)));
          return acc.id;
        }),
      )),
    );
  return ids;
}

/** one run per account from index `from`: `parts` texts to each of `chats` chats, once at `at` */
async function campaigns(stack, token, ids, from, { at, chats, parts }) {
  for (let i = 0; i < ids.length; i += 20)
    await Promise.all(
      ids.slice(i, i + 20).map((accountId, k) =>
        call(stack, 'POST', '/v1/campaigns', token, {
          accountId,
          name: `c${from + i + k}`,
          timezone: 'UTC',
          schedule: { type: 'once', at: new Date(at).toISOString() },
          messages: Array.from({ length: parts }, (_, p) => ({ type: 'text', text: `from account ${from + i + k}, part ${p}` })),
          targets: Array.from({ length: chats }, (_, c) => chatOf(from + i + k, c)),
        }),
      ),
    );
}

/** ms from `since` to each account's first message accepted at the server after it */
function firstAccepted(wa, since) {
  const first = new Map();
  for (const [key, times] of wa.accepted) {
    const i = Number(/from account (\d+),/.exec(key)?.[1] ?? -1);
    for (const t of times) if (t >= since && t - since < (first.get(i) ?? Infinity)) first.set(i, t - since);
  }
  return first;
}

async function burst(n) {
  const what = mode === 'jobs' ? `their jobs${sending ? ` while ${sending} accounts send` : ''}` : 'the account holder';
  console.log(
    `\n== ${n} accounts at once, by ${what} (load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})`,
  );
  const wa = await countedServer();
  const dir = mkdtempSync(join(tmpdir(), 'connect-burst-'));
  try {
    await withStack(env, { senders: 0, env: { WHATSAPP_WS_URL: wa.url } }, async ({ stack, token, db, keyPrefix }) => {
      const busy = mode === 'jobs' ? await accounts(stack, token, 0, sending, {}) : [];
      const burstIds = await accounts(stack, token, sending, n, mode === 'jobs' ? { connection: 'on_demand' } : {});
      const senders = senderSet(
        wireSenderEnv(
          { db, redisUrl: env.redisUrl, keyPrefix, wa, stack, connectsPerSecond: mode === 'jobs' ? 25 : 1000 },
          { NODE_OPTIONS: `--import=${trace}`, PROBE_TRACE_DIR: dir, ...JSON.parse(process.env.PROBE_ENV ?? '{}') },
        ),
      );
      try {
        let started = Date.now();
        const x = await senders.start('sender-1');
        if (mode === 'jobs') {
          await eventually(`${sending} connected`, async () => wa.count.open === sending && (await senders.sockets(x)) === sending, 300_000, 100);
          if (sending) {
            await campaigns(stack, token, busy, 0, { at: Date.now(), chats: 30, parts: 10 });
            await eventually(`${sending} sending`, async () => firstAccepted(wa, 0).size >= sending, 300_000, 250);
          }
          // every run due at one instant, a little after they are all made
          started = Date.now() + 5_000 + n * 40;
          await campaigns(stack, token, burstIds, sending, { at: started, chats: 1, parts: 1 });
          await sleep(Math.max(0, started - Date.now() - 1_000));
          // the trace and profile start over here
          writeFileSync(join(dir, 'reset'), '');
          process.kill(x.pid, 'SIGUSR2');
          await sleep(Math.max(0, started - Date.now()));
        }
        const beside0 = besideCpuSeconds(wa.pid);
        const cpu0 = cpuSeconds(x.pid);
        const db0 = await senders.metric(x, 'metronome_db_queries_total');
        const all = sending + n;
        // jobs: on_demand accounts are let go once their run ends, so the end is every one's message accepted
        if (mode === 'jobs') await eventually(`${n} sent`, async () => firstAccepted(wa, started).size >= all, 300_000, 100);
        else await eventually(`${all} connected`, async () => wa.count.open === all && (await senders.sockets(x)) === all, 300_000, 100);
        const seconds = (Date.now() - started) / 1000;
        const cpu = cpuSeconds(x.pid) - cpu0;
        const beside = besideCpuSeconds(wa.pid);
        const db = (await senders.metric(x, 'metronome_db_queries_total')) - db0;
        if (mode === 'jobs') {
          const first = firstAccepted(wa, started);
          const of = burstIds.map((_, k) => first.get(sending + k));
          console.log(`first message accepted after the runs were due, ms (10/50/90 %, longest): ${quantiles(of)}`);
        }
        process.kill(x.pid, 'SIGUSR2');
        await eventually('the trace written', async () => existsSync(join(dir, `${x.pid}.done`)), 30_000, 100);
        const t = JSON.parse(readFileSync(join(dir, `${x.pid}.trace.json`), 'utf8'));
        const profile = JSON.parse(readFileSync(join(dir, `${x.pid}.cpuprofile`), 'utf8'));
        const mine = new Set(burstIds);
        report(n, seconds, { ...t, accounts: t.accounts.filter((a) => mine.has(a.id)) }, profile);
        const pct = (k) => ((100 * (beside[k] - beside0[k])) / seconds).toFixed(0);
        console.log(
          `CPU over those ${seconds.toFixed(1)} s, % of a core: sender ${((100 * cpu) / seconds).toFixed(0)}, server ${pct('server')}, PostgreSQL ${pct('postgres')}, Redis ${pct('redis')}`,
        );
        const q = t.totals;
        console.log(
          `sender: ${db} database statements meanwhile (${(db / n).toFixed(1)} per account); pg queries timed ${q.queries}, mean ${(q.queryMs / q.queries).toFixed(1)} ms; pool waits ${q.poolWaits}, mean ${(q.poolWaitMs / Math.max(1, q.poolWaits)).toFixed(1)} ms, longest ${q.poolWaitMaxMs.toFixed(0)} ms; Redis commands ${q.redis}, mean ${(q.redisMs / Math.max(1, q.redis)).toFixed(1)} ms; event-loop delay mean ${q.lagMeanMs.toFixed(0)} ms, p99 ${q.lagP99Ms.toFixed(0)} ms, longest ${q.lagMaxMs.toFixed(0)} ms`,
        );
        for (const [text, k] of t.statements.sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${String(k).padStart(5)}  ${text}`);
        await sleep(500);
      } finally {
        await senders.stopAll();
      }
    });
  } finally {
    await wa.close();
    if (!process.env.PROBE_KEEP) rmSync(dir, { recursive: true, force: true });
    else console.log(`trace and profile kept in ${dir}: ${readdirSync(dir).join(', ')}`);
  }
}

function quantiles(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return '-';
  const at = (q) => v[Math.floor(q * (v.length - 1))].toFixed(0);
  return `${at(0.1).padStart(6)} ${at(0.5).padStart(6)} ${at(0.9).padStart(6)} ${v.at(-1).toFixed(0).padStart(6)}  (${v.length})`;
}

function report(n, seconds, t, profile) {
  const done = t.accounts.filter((a) => a.ready);
  const refused = t.accounts.filter((a) => a.refused);
  console.log(`all ${n} ${mode === 'jobs' ? 'sent' : 'open'} after ${seconds.toFixed(1)} s; ${done.length} connects timed, ${refused.length} refused first`);
  if (refused.length) console.log(`  e.g. ${refused[0].refused}`);
  const tag = (a, i) => a.tags?.[i]?.[1];
  const lastTag = (a) => a.tags?.at(-1)?.[1] ?? a.success;
  const phases = [
    ['asked to connect, from the first', (a) => (a.turn0 ?? a.lease0) - Math.min(...done.map((d) => d.turn0 ?? d.lease0))],
    ['turn of the connect pace', (a) => a.turn1 - a.turn0],
    ['turn given, from the first asked', (a) => a.turn1 - Math.min(...done.map((d) => d.turn0))],
    ['lease taken (Redis)', (a) => a.lease1 - a.lease0],
    ['fresh-lease wait', (a) => a.creds0 - a.lease1],
    ['creds read (PostgreSQL)', (a) => a.creds1 - a.creds0],
    ['proxy read, to makeWASocket', (a) => a.connect - a.creds1],
    ['makeWASocket (synchronous)', (a) => a.built - a.connect],
    ['TCP + WebSocket open', (a) => a.wsOpen - a.built],
    ['noise hello answered', (a) => a.hello - a.wsOpen],
    ['login → success', (a) => a.success - a.hello],
    ...[0, 1, 2].map((i) => [`init query ${i + 1} (${done[0]?.tags?.[i]?.[0] ?? '?'})`, (a) => tag(a, i) - (i ? tag(a, i - 1) : a.success)]),
    ['→ open', (a) => a.ready - lastTag(a)],
    ['total: lease → open', (a) => a.ready - a.lease0],
    ['opened, from the first asked', (a) => a.ready - Math.min(...done.map((d) => d.turn0 ?? d.lease0))],
  ];
  console.log(`${'phase, ms'.padEnd(32)}    10 %   50 %   90 %    max`);
  for (const [name, f] of phases) console.log(`${name.padEnd(32)} ${quantiles(done.map(f))}`);
  const inFlight = done.flatMap((a) => [
    [a.lease0, 1],
    [a.ready, -1],
  ]);
  let open = 0;
  let most = 0;
  for (const [, d] of inFlight.sort((a, b) => a[0] - b[0])) most = Math.max(most, (open += d));
  const keys = done.map((a) => a.readKeysN ?? 0);
  const writes = done.map((a) => a.writeN ?? 0);
  console.log(
    `connecting at once, most: ${most}; per connect: key reads ${quantiles(keys)} , writes ${quantiles(writes)}, key read ms ${quantiles(done.map((a) => a.readKeysMs ?? 0))}, write ms ${quantiles(done.map((a) => a.writeMs ?? 0))}`,
  );
  const kinds = new Map();
  for (const k of done.flatMap((a) => a.kinds ?? [])) kinds.set(k, (kinds.get(k) ?? 0) + 1);
  console.log(`auth-state statements per connect: ${[...kinds].map(([k, c]) => `${k} ×${(c / done.length).toFixed(1)}`).join('; ')}`);
  const from = Math.min(...done.map((a) => a.lease0));
  const to = Math.max(...done.map((a) => a.ready));
  profileSummary(profile, t.startedAt, from, to);
}

/** Self time by package and by function over [from, to] (epoch ms) of a V8 CPU profile started at `startedAt`. */
function profileSummary(profile, startedAt, from, to) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byPkg = new Map();
  const byFn = new Map();
  let at = profile.startTime;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    const epoch = startedAt + (at - profile.startTime) / 1000;
    if (epoch < from || epoch > to) continue;
    const cf = nodes.get(profile.samples[i]).callFrame;
    const pkg = packageOf(cf);
    byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + dt);
    const fn = `${cf.functionName || '(anonymous)'} ${shortUrl(cf.url)}:${cf.lineNumber + 1}`;
    byFn.set(fn, (byFn.get(fn) ?? 0) + dt);
    total += dt;
  }
  const ms = (us) => (us / 1000).toFixed(0);
  const top = (m, k) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k);
  console.log(`sender CPU profile over the ${((to - from) / 1000).toFixed(1)} s of connects (ms of samples, ${ms(total)} in all):`);
  console.log(
    `  by package: ${top(byPkg, 14)
      .map(([k, v]) => `${k} ${ms(v)}`)
      .join(', ')}`,
  );
  for (const [k, v] of top(byFn, 20)) console.log(`  ${ms(v).padStart(6)}  ${k}`);
  // who calls the busiest of our code and the libraries: their callers, four frames up
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (id) => nodes.get(id).callFrame.functionName || '(anonymous)';
  const busiest = top(byFn, 12)
    .map(([k]) => k)
    .filter((k) => !k.startsWith('('))
    .slice(0, 6);
  for (const fn of busiest) {
    const chains = new Map();
    at = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      at += profile.timeDeltas[i] ?? 0;
      const epoch = startedAt + (at - profile.startTime) / 1000;
      const id = profile.samples[i];
      const cf = nodes.get(id).callFrame;
      if (epoch < from || epoch > to || `${cf.functionName || '(anonymous)'} ${shortUrl(cf.url)}:${cf.lineNumber + 1}` !== fn) continue;
      const chain = [];
      for (let p = parent.get(id); p !== undefined && chain.length < 4; p = parent.get(p)) chain.push(name(p));
      const k = chain.join(' < ');
      chains.set(k, (chains.get(k) ?? 0) + (profile.timeDeltas[i] ?? 0));
    }
    console.log(
      `  ${fn} called from: ${top(chains, 3)
        .map(([k, v]) => `${k} (${ms(v)})`)
        .join('; ')}`,
    );
  }
}

function packageOf(cf) {
  if (!cf.url) return cf.functionName || '(native)';
  if (cf.url.startsWith('node:')) return 'node';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(cf.url);
  if (m) return m[1];
  const ours = /\/(libs|services)\/([^/]+)\//.exec(cf.url);
  return ours ? `${ours[1]}/${ours[2]}` : shortUrl(cf.url);
}

function shortUrl(url) {
  return url.replace(/^file:\/\/.*?\/(node_modules|libs|services|bench)\//, '$1/');
}
