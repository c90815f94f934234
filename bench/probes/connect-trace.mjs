// Loaded into a sender by bench/probes/connect-burst.mjs, or by accounts-capacity with BENCH_SENDER_NODE_OPTIONS
// (NODE_OPTIONS=--import): times each WhatsApp connect's phases and each account's first send
// by wrapping prototypes the sender shares with this module (the same resolved files), profiles the CPU, and on SIGUSR2
// writes both to PROBE_TRACE_DIR. Nothing here changes what the sender does.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const dir = process.env.PROBE_TRACE_DIR;
const root = process.cwd();
const now = () => performance.timeOrigin + performance.now();
/** accountId → its phases (ms since the epoch) and counters */
const byAccount = new Map();
const acc = (id) => byAccount.get(id) ?? byAccount.set(id, { id }).get(id);
/** Baileys' WebSocketClient → its connect's marks, until the pool's Connection names the account */
const byWs = new WeakMap();
const totals = { poolWaits: 0, poolWaitMs: 0, poolWaitMaxMs: 0, queries: 0, queryMs: 0, redis: 0, redisMs: 0 };
const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();

const timed = (proto, name, around) => {
  const orig = proto[name];
  proto[name] = function (...args) {
    const t0 = now();
    const r = orig.apply(this, args);
    if (r && typeof r.then === 'function')
      r.then(
        (v) => around(this, args, t0, now(), v),
        () => around(this, args, t0, now(), undefined),
      );
    return r;
  };
};

const { SocketLeases } = await import('@metronome/redis');
timed(SocketLeases.prototype, 'acquire', (_, [id], t0, t1, v) => {
  const a = acc(id);
  if (a.lease0 !== undefined) return;
  Object.assign(a, { lease0: t0, lease1: t1, lease: v });
});

const { WhatsAppAuthRepository } = await import('@metronome/db');
timed(WhatsAppAuthRepository.prototype, 'readCreds', (_, [id], t0, t1) => {
  const a = acc(id);
  if (a.creds0 === undefined) Object.assign(a, { creds0: t0, creds1: t1 });
});
if (WhatsAppAuthRepository.prototype.readMany)
  timed(WhatsAppAuthRepository.prototype, 'readMany', (_, [id, keys], t0, t1) => {
    const a = acc(id);
    if (keys.some((k) => k.kind === 'creds')) {
      if (a.creds0 === undefined) Object.assign(a, { creds0: t0, creds1: t1 });
      return;
    }
    a.readKeysN = (a.readKeysN ?? 0) + 1;
    a.readKeysMs = (a.readKeysMs ?? 0) + (t1 - t0);
    (a.kinds ??= []).push(`many ${keys.map((k) => k.kind).join('+')}`);
  });
for (const m of ['readKeys', 'write'])
  timed(WhatsAppAuthRepository.prototype, m, (_, [id, kindOrRows, ids], t0, t1) => {
    const a = acc(id);
    a[`${m}N`] = (a[`${m}N`] ?? 0) + 1;
    a[`${m}Ms`] = (a[`${m}Ms`] ?? 0) + (t1 - t0);
    const what = m === 'readKeys' ? `${kindOrRows}[${ids.join(',')}]` : `write ${kindOrRows.map((r) => `${r.kind}:${r.keyId}`).join(',')}`;
    (a.kinds ??= []).push(what.replace(/\d{6,}/g, 'N'));
  });

const baileys = (p) => import(pathToFileURL(join(root, 'node_modules/@whiskeysockets/baileys/lib', p)).href);
const { WebSocketClient } = await baileys('Socket/Client/websocket.js');
const connect = WebSocketClient.prototype.connect;
WebSocketClient.prototype.connect = function () {
  const rec = { connect: now(), tags: [] };
  byWs.set(this, rec);
  // after the rest of makeWASocket and the pool's listeners, all synchronous
  queueMicrotask(() => (rec.built = now()));
  return connect.call(this);
};
const emit = WebSocketClient.prototype.emit;
WebSocketClient.prototype.emit = function (event, ...args) {
  const rec = byWs.get(this);
  if (rec) {
    if (event === 'open') rec.wsOpen ??= now();
    else if (event === 'frame') rec.hello ??= now();
    else if (event === 'CB:success') rec.success ??= now();
    else if (rec.success && !rec.open && typeof event === 'string' && event.startsWith('TAG:') && event !== 'TAG:undefined') {
      const child = Array.isArray(args[0]?.content) ? args[0].content[0]?.tag : undefined;
      rec.tags.push([child ?? 'empty', now()]);
    }
  }
  return emit.call(this, event, ...args);
};

const { Connection } = await import(pathToFileURL(join(root, 'libs/transports/dist/whatsapp/connection.js')).href);
const resolveReady = Connection.prototype.resolveReady;
Connection.prototype.resolveReady = function (value) {
  if (!this.isSettled) {
    const a = acc(this.accountId);
    const rec = byWs.get(this.socket?.ws);
    if (rec) Object.assign(a, rec);
    if (value === null) a.ready ??= now();
    if (rec) rec.open = true;
    else a.refused = JSON.stringify(value).slice(0, 200);
  }
  return resolveReady.call(this, value);
};

const turns = await import(pathToFileURL(join(root, 'libs/transports/dist/whatsapp/connect-turns.js')).href).catch(() => null);
if (turns)
  timed(turns.ConnectTurns.prototype, 'before', (_, [id], t0, t1) => {
    const a = acc(id);
    if (a.turn0 === undefined) Object.assign(a, { turn0: t0, turn1: t1 });
  });

// each account's first send after the reset (its wait for the socket included) and its jobs' readiness checks
const { WhatsAppTransport } = await import(pathToFileURL(join(root, 'libs/transports/dist/whatsapp/whatsapp-transport.js')).href);
timed(WhatsAppTransport.prototype, 'send', (_, [account], t0, t1, v) => {
  const a = acc(account.id);
  a.sends = (a.sends ?? 0) + 1;
  if (a.send0 === undefined) Object.assign(a, { send0: t0, send1: t1, sendResult: String(JSON.stringify(v)).slice(0, 160) });
});
timed(WhatsAppTransport.prototype, 'readiness', (_, [id], _t0, t1, v) => {
  const a = acc(id);
  a.readinessN = (a.readinessN ?? 0) + 1;
  if (v?.ready) a.ready0 ??= t1;
});
const pg = (await import('pg')).default;
timed(pg.Pool.prototype, 'connect', (_, args, t0, t1) => {
  if (args.length > 0) return;
  totals.poolWaits++;
  totals.poolWaitMs += t1 - t0;
  totals.poolWaitMaxMs = Math.max(totals.poolWaitMaxMs, t1 - t0);
});
const statements = new Map();
timed(pg.Client.prototype, 'query', (_, args, t0, t1) => {
  if (typeof args.at(-1) === 'function') return;
  totals.queries++;
  totals.queryMs += t1 - t0;
  const text = String(typeof args[0] === 'string' ? args[0] : args[0]?.text)
    .replace(/\s+/g, ' ')
    .slice(0, 90);
  statements.set(text, (statements.get(text) ?? 0) + 1);
});
const { Redis } = await import('ioredis');
timed(Redis.prototype, 'sendCommand', (_, __, t0, t1) => {
  totals.redis++;
  totals.redisMs += t1 - t0;
});

const session = new Session();
session.connect();
await session.post('Profiler.setSamplingInterval', { interval: 1_000 });
await session.post('Profiler.enable');
await session.post('Profiler.start');
let startedAt = now();

const restart = async () => {
  await session.post('Profiler.start');
  startedAt = now();
  for (const k of Object.keys(totals)) totals[k] = 0;
  statements.clear();
  byAccount.clear();
  lag.reset();
};

// SIGUSR2: with a file `reset` (or `reset-<pid>`) in PROBE_TRACE_DIR, start over (profile, totals, marks); else write
// them out and start over (bench/probes/trace-control.mjs names each dump)
process.on('SIGUSR2', async () => {
  const reset = [join(dir, `reset-${process.pid}`), join(dir, 'reset')].find((f) => existsSync(f));
  const { profile } = await session.post('Profiler.stop');
  if (reset) {
    rmSync(reset);
    return restart();
  }
  const t = { ...totals, lagMaxMs: lag.max / 1e6, lagMeanMs: lag.mean / 1e6, lagP99Ms: lag.percentile(99) / 1e6 };
  writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(profile));
  writeFileSync(
    join(dir, `${process.pid}.trace.json`),
    JSON.stringify({ startedAt, totals: t, statements: [...statements], accounts: [...byAccount.values()] }),
  );
  writeFileSync(join(dir, `${process.pid}.done`), '');
  await restart();
});
