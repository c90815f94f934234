import { fork } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { scrapeSum, startService } from '@metronome/testkit';
import { cpuSeconds } from '../probe-process.mjs';
import { BufferJSON, initAuthCreds, proto } from '@whiskeysockets/baileys';

// What the accounts-capacity benchmark sees at the WhatsApp server, and how it starts senders.

/**
 * @openclaw/crabline's WhatsApp Web server behind a TCP relay counting the connections open
 * through it (and the most at once, and how many were ever opened), in a child process; the
 * server's accepted-message events give each chat's messages and when they arrived.
 */
export async function countedServer() {
  const child = fork(fileURLToPath(new URL('./whatsapp-server-process.mjs', import.meta.url)), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const accepted = new Map();
  const count = { open: 0, most: 0, opened: 0 };
  let fresh = () => undefined;
  child.on('message', (m) => {
    if (m.type !== 'state') return;
    Object.assign(count, m.count);
    for (const [key, at] of m.accepted) {
      const times = accepted.get(key) ?? [];
      times.push(at);
      accepted.set(key, times);
    }
    fresh();
  });
  const { url } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`the WhatsApp server process exited (${code})`)));
  });
  return {
    url,
    pid: child.pid,
    /** as of the child's last report (every 100 ms) */
    count,
    /** `${chat JID}|${text}` → the times the server accepted that message (decrypted by the server) */
    accepted,
    /** the most open at once counted from now */
    resetMost: () =>
      new Promise((r) => {
        fresh = r;
        child.send({ type: 'resetMost' });
      }),
    close: () =>
      new Promise((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', r);
        child.send({ type: 'close' });
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
}

/** A linked device's creds as an operator's Baileys script leaves them (no keys yet), for POST /v1/accounts/{id}/session. */
export function sessionBundle(phone) {
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

/** Sender processes on one stack, by name, with their metrics. */
/** What a sender of these scenarios runs with: the stack's database, Redis and sandbox, and the WhatsApp server; `more` on top. */
export function wireSenderEnv({ db, redisUrl, keyPrefix, wa, stack, connectsPerSecond }, more = {}) {
  return {
    DATABASE_URL: db.url,
    REDIS_URL: redisUrl,
    KEY_PREFIX: keyPrefix,
    WHATSAPP_WS_URL: wa.url,
    METRICS_PORT: '0',
    HTTP_TRANSPORT_URL: stack.sandboxUrl,
    ACCOUNT_CONNECTS_PER_SECOND: String(connectsPerSecond),
    ...more,
  };
}

export function senderSet(senderEnv) {
  const live = new Map();
  // BENCH_LOG_DIR: each sender's whole log written there as it comes, to see what a figure was made of
  const keepLog = (s, name) => {
    if (!process.env.BENCH_LOG_DIR) return;
    const file = createWriteStream(join(process.env.BENCH_LOG_DIR, `${name}-${s.child.pid}.log`));
    for (const stream of [s.child.stdout, s.child.stderr]) stream?.on('data', (chunk) => file.write(chunk));
    s.child.once('exit', () => file.end());
  };
  const start = async (name) => {
    const s = startService(name, 'services/sender/dist/main.js', senderEnv);
    keepLog(s, name);
    const port = Number((await s.waitForLog((l) => l['msg'] === 'sender ready'))['metricsPort']);
    const x = { name, s, port, pid: s.child.pid };
    live.set(name, x);
    return x;
  };
  const metric = (x, name) => scrapeSum(`http://127.0.0.1:${x.port}/metrics`, name);
  return {
    live,
    start,
    metric,
    sockets: (x) => metric(x, 'metronome_platform_sockets_open'),
    stop: async (name, signal) => {
      const x = live.get(name);
      live.delete(name);
      await x.s.stop(signal);
      return x.s;
    },
    stopAll: () => Promise.all([...live.values()].map((x) => x.s.stop('SIGKILL').catch(() => undefined))),
  };
}

/** A sender's stop as its log tells it: ms from the signal to its last word, that word, and its warnings counted. */
export function stopSummary(output) {
  const lines = output.flatMap((line) => {
    try {
      return [JSON.parse(line)];
    } catch {
      return [];
    }
  });
  const from = lines.findIndex((l) => typeof l.signal === 'string' && 'deadlineMs' in l);
  if (from < 0) return 'no stop logged';
  const after = lines.slice(from);
  const last = after.filter((l) => /stopped$|stop deadline passed|close failed/.test(String(l.msg))).at(-1);
  const warnings = {};
  for (const l of after) {
    const k = l.step ? `${l.msg}: ${l.step}` : l.msg;
    if (l.level >= 40 && l !== last) warnings[k] = (warnings[k] ?? 0) + 1;
  }
  const ms = last ? Date.parse(last.time) - Date.parse(after[0].time) : NaN;
  return `${last?.msg ?? 'no last word'} after ${ms} ms; warnings ${JSON.stringify(warnings)}`;
}

/** Each account's lease holder as a sender's pid (null: free). */
export async function holderPids(redis, keyPrefix, ids) {
  const held = await redis.mget(ids.map((id) => `${keyPrefix}:account:${id}:socket`));
  return held.map((h) => (h ? Number(h.split(':')[2]) : null));
}

/** CPU seconds so far of the processes beside the senders: the WhatsApp server, every PostgreSQL and Redis process, this benchmark. */
export function besideCpuSeconds(serverPid) {
  const of = { server: cpuSeconds(serverPid), postgres: 0, redis: 0, benchmark: cpuSeconds(process.pid) };
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let comm;
    try {
      comm = readFileSync(`/proc/${d}/comm`, 'utf8').trim();
      if (comm === 'postgres') of.postgres += cpuSeconds(Number(d));
      else if (comm === 'redis-server') of.redis += cpuSeconds(Number(d));
    } catch {
      // the process ended meanwhile
    }
  }
  return of;
}
