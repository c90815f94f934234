import { createRedis } from '@metronome/redis';
import { startService, type ServiceProcess } from '@metronome/testkit';
import type { Redis } from 'ioredis';
import { api, createTenant, runsToEnd, startStack, type Stack } from '../helpers/stack.js';
import { eventually, REDIS_URL } from '../helpers/test-env.js';
import { credsOnlyBundle } from '../helpers/wire-whatsapp.js';
import { startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';

// Always-connected accounts (issue 53), with the real Baileys in the senders against the project's
// FAKE WhatsApp Web server on the wire (test/helpers/wire-whatsapp-server.ts): every active
// account holds one socket on some sender with no run sending, so a reply and a STOP arrive when
// the person writes them; a sender that joins takes its share by hand-over; a SIGKILLed sender's
// accounts go to the other once their leases run out; a SIGTERMed one hands them over at once. The
// server counts each account's open sockets: never two at one moment.

const ACCOUNTS = 4;
const HOLD_EVERY_MS = 1_000;
/** the WhatsApp socket lease (the sender's SENDER_HOLD_MS, 15 s by default) */
const LEASE_MS = 15_000;
/** after a lease: one pass, the wait on a fresh lease (2.5 s) and the handshake, on a loaded machine */
const CONNECT_MS = 10_000;
const phoneOf = (a: number) => `6012200${a}000`;
const personOf = (n: number) => `6019900000${n}@s.whatsapp.net`;

let wire: WireServer;
let stack: Stack;
let redis: Redis;
const extra: ServiceProcess[] = [];
// one base job slot: a sender's slots for the accounts it holds are its own (worker-pool.ts)
const senderEnv = { ACCOUNT_HOLD_EVERY_MS: String(HOLD_EVERY_MS), ACCOUNT_CONNECTS_PER_SECOND: '20', SEND_TIMEOUT_MS: '5000', SENDER_CONCURRENCY: '1' };

beforeAll(async () => {
  wire = await startWireServer();
  // few prekeys left: each device uploads its own on connecting, which the server encrypts replies to
  wire.preKeyCount = 3;
  stack = await startStack({ senders: 1, env: { WHATSAPP_WS_URL: wire.url }, senderEnv });
  redis = createRedis(REDIS_URL, 'test-always-connected');
}, 60_000);
afterAll(async () => {
  await Promise.all(extra.map((s) => s.stop('SIGKILL')));
  await stack?.stop();
  await redis?.quit();
  await wire?.close();
}, 60_000);

/** Another sender process on the stack's database, Redis prefix and wire server, with its metrics port. */
async function startSender(name: string): Promise<{ sender: ServiceProcess; port: number }> {
  const sender = startService(name, 'services/sender/dist/main.js', {
    DATABASE_URL: stack.db.url,
    REDIS_URL,
    KEY_PREFIX: stack.keyPrefix,
    WHATSAPP_WS_URL: wire.url,
    METRICS_PORT: '0',
    HTTP_TRANSPORT_URL: stack.sandboxUrl,
    ...senderEnv,
  });
  extra.push(sender);
  const ready = await sender.waitForLog((l) => l['msg'] === 'sender ready');
  return { sender, port: Number(ready['metricsPort']) };
}

/** The WhatsApp sockets a sender has open, by its metrics (metronome_platform_sockets_open). */
async function socketsOpen(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(/^metronome_platform_sockets_open\{platform="whatsapp"[^}]*\} (\d+)/m.exec(text)?.[1] ?? 0);
}

/** Each account's lease holder, as the pid of the sender holding it (null: free). */
async function holders(accounts: string[]): Promise<(number | null)[]> {
  const held = await redis.mget(accounts.map((id) => `${stack.keyPrefix}:account:${id}:socket`));
  return held.map((h) => (h ? Number(h.split(':')[2]) : null));
}
const countOf = (pids: (number | null)[], pid: number | undefined) => pids.filter((p) => p === pid).length;
/** every account with exactly one socket open at the server */
const allLive = () => Array.from({ length: ACCOUNTS }, (_, a) => wire.live(phoneOf(a))).every((n) => n === 1);

let token: string;
const accounts: string[] = [];

test('active accounts connect with no run sending, and one between campaigns receives a reply and a STOP within 5 s of the server sending them', async () => {
  token = (await createTenant(stack, 'always-connected')).body.token;
  for (let a = 0; a < ACCOUNTS; a++) {
    const acc = await api(stack, 'POST', '/v1/accounts', token, { platform: 'whatsapp', name: `shop ${a}`, sendDelaySeconds: null, typing: null });
    expect(acc.status).toBe(201);
    accounts.push(acc.body.id);
    const r = await api(stack, 'POST', `/v1/accounts/${acc.body.id}/session`, token, credsOnlyBundle(phoneOf(a)));
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { status: 'active' } });
  }
  // the API's check of each session closed its socket: the sender opens them, no run asking
  await eventually('every account connected by the sender', async () => allLive(), 30_000, 100);
  expect(await holders(accounts)).toEqual(accounts.map(() => stack.senders[0]!.child.pid));

  // one campaign to a person on account 0, then nothing sends
  const c = await api(stack, 'POST', '/v1/campaigns', token, {
    accountId: accounts[0],
    name: 'one message',
    timezone: 'UTC',
    schedule: { type: 'once', at: new Date().toISOString() },
    messages: [{ type: 'text', text: 'Our shop opens at nine' }],
    targets: [personOf(1)],
    active: false,
  });
  expect(c.status).toBe(201);
  const run = await api(stack, 'POST', `/v1/campaigns/${c.body.id}/runs`, token);
  expect(run.status).toBe(201);
  expect((await runsToEnd(stack, token, [run.body.id], 60_000, 200))[0]!.status).toBe('success');

  const repliedAt = async () => (await api(stack, 'GET', `/v1/runs/${run.body.id}/targets`, token)).body.items[0]?.repliedAt ?? null;
  expect(await repliedAt()).toBeNull();
  let sent = Date.now();
  await wire.sendText(personOf(1), phoneOf(0), 'Thanks, see you at nine');
  await eventually('the reply counted on the run', async () => (await repliedAt()) !== null, 5_000, 50);
  const replyMs = Date.now() - sent;

  // account 1 never ran a campaign: a STOP lists the person all the same
  const listed = async () =>
    ((await api(stack, 'GET', `/v1/accounts/${accounts[1]}/suppressions`, token)).body.items as { chatId: string; reason: string }[]).some(
      (s) => s.chatId === personOf(2) && s.reason === 'opt_out',
    );
  expect(await listed()).toBe(false);
  sent = Date.now();
  await wire.sendText(personOf(2), phoneOf(1), 'STOP');
  await eventually('the STOP listed', listed, 5_000, 50);
  console.log(`reply counted ${replyMs} ms, STOP listed ${Date.now() - sent} ms after the server sent them`);

  // on_demand: the holder closes the idle connection (no run open) and leaves it closed; always opens it again
  const set = async (connection: string) =>
    expect((await api(stack, 'PATCH', `/v1/accounts/${accounts[3]}`, token, { connection })).body).toMatchObject({ connection });
  await set('on_demand');
  await eventually('the on_demand account closed', async () => wire.live(phoneOf(3)) === 0, 10_000, 100);
  await new Promise((r) => setTimeout(r, 3 * HOLD_EVERY_MS));
  expect(wire.live(phoneOf(3))).toBe(0);
  await set('always');
  await eventually('the account connected again', async () => allLive(), CONNECT_MS, 100);
}, 120_000);

test('a sender sends for every account it holds at once, past SENDER_CONCURRENCY: a job keeps its slot between paced parts, and each held account has one', async () => {
  // each account sends three parts to a person of its own at 20 a minute: 6 s of paced parts in one job
  const from = wire.messages.length;
  const campaigns: string[] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    expect((await api(stack, 'PATCH', `/v1/accounts/${accounts[a]}`, token, { maxSendPerMinute: 20 })).status).toBe(200);
    const c = await api(stack, 'POST', '/v1/campaigns', token, {
      accountId: accounts[a],
      name: `three parts ${a}`,
      timezone: 'UTC',
      schedule: { type: 'once', at: new Date().toISOString() },
      messages: [1, 2, 3].map((p) => ({ type: 'text', text: `Part ${p} of account ${a}` })),
      targets: [personOf(5 + a)],
      active: false,
    });
    expect(c.status).toBe(201);
    campaigns.push(c.body.id);
  }
  const runs = (await Promise.all(campaigns.map((id) => api(stack, 'POST', `/v1/campaigns/${id}/runs`, token)))).map((r) => r.body.id as string);
  expect((await runsToEnd(stack, token, runs, 60_000, 200)).map((r) => r.status)).toEqual(runs.map(() => 'success'));
  // at the server: every account's first part came before any account's last (with one slot, each account waits for
  // the one before it to send all three)
  const sent = wire.messages.slice(from);
  const firsts = Array.from({ length: ACCOUNTS }, (_, a) => Math.min(...sent.filter((m) => m.from === phoneOf(a)).map((m) => m.at)));
  const lasts = Array.from({ length: ACCOUNTS }, (_, a) => Math.max(...sent.filter((m) => m.from === phoneOf(a)).map((m) => m.at)));
  expect(sent).toHaveLength(3 * ACCOUNTS);
  expect(Math.max(...firsts)).toBeLessThan(Math.min(...lasts));
}, 90_000);

test('a sender that joins takes its share by hand-over; a SIGKILLed one loses its accounts within a lease; a SIGTERMed one hands them over at once; never two sockets for one account', async () => {
  const first = { sender: stack.senders[0]!, port: stack.senderMetricsPorts[0]! };
  const second = await startSender('sender-2');
  /** `s` holds `n` accounts: their leases, and as many sockets open by its own count */
  const holding = async (s: { sender: ServiceProcess; port: number }, n: number) =>
    countOf(await holders(accounts), s.sender.child.pid) === n && (await socketsOpen(s.port)) === n;
  await eventually(
    'the accounts spread over the two senders',
    async () => (await holding(first, ACCOUNTS / 2)) && (await holding(second, ACCOUNTS / 2)) && allLive(),
    20_000,
    100,
  );

  // SIGKILL: the sockets drop with the process; its leases run out, then the other takes them
  const killed = Date.now();
  await first.sender.stop('SIGKILL');
  await eventually('the killed sender’s accounts on the other', async () => (await holding(second, ACCOUNTS)) && allLive(), LEASE_MS + CONNECT_MS, 200);
  const movedMs = Date.now() - killed;

  // SIGTERM: out of the registry, sockets closed and leases let go, the other takes them well within a lease
  const third = await startSender('sender-3');
  await eventually('the newcomer’s share', async () => (await holding(third, ACCOUNTS / 2)) && (await holding(second, ACCOUNTS / 2)) && allLive(), 20_000, 100);
  const stopped = Date.now();
  expect(await second.sender.stop('SIGTERM')).toBe(0);
  await eventually('the stopped sender’s accounts on the other', async () => (await holding(third, ACCOUNTS)) && allLive(), CONNECT_MS, 100);
  const handedMs = Date.now() - stopped;
  console.log(`after SIGKILL all accounts connected again in ${movedMs} ms (lease ${LEASE_MS} ms); after SIGTERM in ${handedMs} ms`);

  expect(Object.fromEntries(accounts.map((_, a) => [phoneOf(a), wire.mostLive.get(phoneOf(a))]))).toEqual(
    Object.fromEntries(accounts.map((_, a) => [phoneOf(a), 1])),
  );
}, 180_000);
