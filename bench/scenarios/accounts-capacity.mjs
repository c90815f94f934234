import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRedis } from '@metronome/redis';
import { eventually, scrapeSum, startService } from '@metronome/testkit';
import { startWhatsAppServer } from '@openclaw/crabline';
import { BufferJSON, initAuthCreds, proto } from '@whiskeysockets/baileys';
import { randomBytes } from 'node:crypto';
import { cpuSeconds } from '../probe-process.mjs';
import { call, withStack } from './common.mjs';

// Always-connected WhatsApp accounts over 2 senders (issue 53): N accounts moved in by session
// import, then 2 sender processes started; the real Baileys in each connects to
// @openclaw/crabline's WhatsApp Web server (WHATSAPP_WS_URL) behind a TCP relay that counts the
// sockets open at the server. Figures per size: time from the senders' start to every account
// connected, each sender's RSS, heap and idle CPU with its accounts connected and nothing
// sending, the time from a kill -9 of the sender holding the most to all of them connected on
// the other, and the most sockets open at the server at one moment. Nothing sends: the sending
// phase of issue 53 is not measured here. BENCH_ACCOUNTS=100,500 picks the sizes.
const IDLE_MS = 30_000;
const CONNECTS_PER_SECOND = 20;

export async function accountsCapacity(env) {
  const sizes = env.quick ? [20] : (process.env.BENCH_ACCOUNTS ?? '100,500,1000').split(',').map(Number);
  const figures = {};
  for (const n of sizes) Object.assign(figures, await oneSize(env, n));
  return {
    params: { sizes, senders: 2, idleSeconds: IDLE_MS / 1000, connectsPerSecond: CONNECTS_PER_SECOND, server: '@openclaw/crabline' },
    figures,
  };
}

/** The crabline server behind a relay counting the TCP connections open through it, and the most at once. */
async function countedServer() {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-wa-'));
  const server = await startWhatsAppServer({ recorderPath: path.join(dir, 'whatsapp.jsonl') });
  const target = new URL(server.manifest.endpoints.baileysWebSocketUrl);
  const count = { open: 0, most: 0 };
  const relay = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    count.most = Math.max(count.most, ++count.open);
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      count.open--;
      client.destroy();
      upstream.destroy();
    };
    client.pipe(upstream).pipe(client);
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  await new Promise((r) => relay.listen(0, '127.0.0.1', r));
  const url = new URL(target);
  url.port = String(relay.address().port);
  return {
    url: url.toString(),
    count,
    close: async () => {
      await new Promise((r) => relay.close(r));
      await server.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A linked device's creds as an operator's Baileys script leaves them (no keys yet), for POST /v1/accounts/{id}/session. */
function sessionBundle(phone) {
  const creds = initAuthCreds();
  creds.me = { id: `${phone}:7@s.whatsapp.net`, name: `phone ${phone}` };
  // the phone's signature of the device: random bytes, which the server never checks
  creds.account = proto.ADVSignedDeviceIdentity.fromObject({
    details: proto.ADVDeviceIdentity.encode({ rawId: 1, timestamp: Math.floor(Date.now() / 1000), keyIndex: 1 }).finish(),
    accountSignatureKey: randomBytes(32),
    accountSignature: randomBytes(64),
    deviceSignature: randomBytes(64),
  });
  creds.registered = true;
  return { creds: JSON.parse(JSON.stringify(creds, BufferJSON.replacer)), keys: {} };
}

async function oneSize(env, n) {
  const wa = await countedServer();
  const redis = createRedis(env.redisUrl, 'bench-accounts-capacity');
  const senders = [];
  try {
    return await withStack(env, { senders: 0, env: { WHATSAPP_WS_URL: wa.url } }, async ({ stack, token, db, keyPrefix }) => {
      const ids = [];
      for (let i = 0; i < n; i += 20) {
        const batch = Array.from({ length: Math.min(20, n - i) }, async (_, k) => {
          const acc = await call(stack, 'POST', '/v1/accounts', token, { platform: 'whatsapp', name: `wa-${i + k}`, sendDelaySeconds: null, typing: null });
          await call(stack, 'POST', `/v1/accounts/${acc.id}/session`, token, sessionBundle(`6015${String(i + k).padStart(7, '0')}`));
          return acc.id;
        });
        ids.push(...(await Promise.all(batch)));
      }
      const senderEnv = {
        DATABASE_URL: db.url,
        REDIS_URL: env.redisUrl,
        KEY_PREFIX: keyPrefix,
        WHATSAPP_WS_URL: wa.url,
        METRICS_PORT: '0',
        HTTP_TRANSPORT_URL: stack.sandboxUrl,
        ACCOUNT_CONNECTS_PER_SECOND: String(CONNECTS_PER_SECOND),
      };
      const mostBefore = wa.count.most;
      wa.count.most = wa.count.open;
      const started = Date.now();
      const both = ['sender-1', 'sender-2'].map((name) => startService(name, 'services/sender/dist/main.js', senderEnv));
      for (const s of both) senders.push({ s, port: Number((await s.waitForLog((l) => l['msg'] === 'sender ready'))['metricsPort']) });
      const metric = (x, name) => scrapeSum(`http://127.0.0.1:${x.port}/metrics`, name);
      const sockets = (x) => metric(x, 'metronome_platform_sockets_open');
      const connected = async (alive) => (await Promise.all(alive.map(sockets))).reduce((a, b) => a + b, 0) === n && wa.count.open === n;
      const bound = 60_000 + (n / CONNECTS_PER_SECOND) * 3_000;
      const all = await eventually(`${n} accounts connected`, () => connected(senders), bound, 250).then(
        () => true,
        () => false,
      );
      const connectS = all ? (Date.now() - started) / 1000 : `not within ${bound / 1000} s: ${(await Promise.all(senders.map(sockets))).join(' + ')} of ${n}`;
      if (!all) return { [`${n} accounts: connected after the senders start s`]: connectS };

      const held = await Promise.all(senders.map(sockets));
      const cpu0 = senders.map((x) => cpuSeconds(x.s.child.pid));
      await new Promise((r) => setTimeout(r, IDLE_MS));
      const cpu = senders.map((x, i) => (100 * (cpuSeconds(x.s.child.pid) - cpu0[i])) / (IDLE_MS / 1000));
      const rss = await Promise.all(senders.map((x) => metric(x, 'process_resident_memory_bytes')));
      const heap = await Promise.all(senders.map((x) => metric(x, 'nodejs_heap_size_used_bytes')));
      const mb = (b) => b / 1024 / 1024;

      // kill -9 the sender holding the most; the other takes its accounts once their leases run out
      const victim = held[0] >= held[1] ? 0 : 1;
      const survivor = senders[1 - victim];
      const killed = Date.now();
      senders[victim].s.child.kill('SIGKILL');
      // a bound, not a goal: past it the figure says how many were connected then
      const takeover = await eventually(`the killed sender's ${held[victim]} accounts on the other`, () => connected([survivor]), 60_000 + n * 200, 250).then(
        () => (Date.now() - killed) / 1000,
        async () => `not within ${(Date.now() - killed) / 1000} s: ${await sockets(survivor)} of ${n}`,
      );
      const holders = await redis.mget(ids.map((id) => `${keyPrefix}:account:${id}:socket`));

      const f = (k) => `${n} accounts: ${k}`;
      return {
        [f('connected after the senders start s')]: connectS,
        [f('accounts held per sender')]: held.join(' / '),
        [f('RSS per sender MB')]: rss.map((b) => mb(b).toFixed(0)).join(' / '),
        [f('RSS per held account MB')]: Math.max(...rss.map((b, i) => mb(b) / Math.max(1, held[i]))),
        [f('heap per sender MB')]: heap.map((b) => mb(b).toFixed(0)).join(' / '),
        [f('idle CPU per sender % of a core')]: cpu.map((c) => c.toFixed(1)).join(' / '),
        [f('idle CPU per 1,000 accounts % of a core')]: ((cpu[0] + cpu[1]) * 1000) / n,
        [f('kill -9: all connected again on the other s')]: takeover,
        [f('accounts on the survivor after the kill')]: holders.filter((h) => h && Number(h.split(':')[2]) === survivor.s.child.pid).length,
        [f('lease holders after the kill')]: JSON.stringify(
          holders.reduce((m, h) => ((m[h ? h.split(':')[2] : 'free'] = (m[h ? h.split(':')[2] : 'free'] ?? 0) + 1), m), {}),
        ),
        [f('most sockets open at the server at once')]: wa.count.most,
        [f('most sockets open during the imports')]: mostBefore,
      };
    });
  } finally {
    await Promise.all(senders.map((x) => x.s.stop('SIGKILL').catch(() => undefined)));
    await redis.quit();
    await wa.close();
  }
}
