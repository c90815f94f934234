import { createRedis } from '@metronome/redis';
import type { Redis } from 'ioredis';
import { api, createTenant, runsToEnd, startStack, type Stack } from '../helpers/stack.js';
import { eventually, REDIS_URL } from '../helpers/test-env.js';
import { credsOnlyBundle } from '../helpers/wire-whatsapp.js';
import { startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';

// A held account's jobs run on the sender holding its socket (issue 53, job-routes.ts): two senders with the real
// Baileys against the project's FAKE WhatsApp Web server on the wire share four always-connected accounts; each run
// sends one part a job (SENDS_PER_JOB=1), so each of its next jobs is enqueued by the sender that just sent. Routed to
// the holder's own queue, a run lands on the other sender at most once (its first job, from the shared queue); from the
// shared queue its next jobs would land on the other sender about half the time, each left there to come back.

const ACCOUNTS = 4;
const TARGETS = 6;
const phoneOf = (a: number) => `6012300${a}000`;
const personOf = (a: number, t: number) => `601980${a}0000${t}@s.whatsapp.net`;

let wire: WireServer;
let stack: Stack;
let redis: Redis;

beforeAll(async () => {
  wire = await startWireServer();
  stack = await startStack({
    senders: 2,
    env: { WHATSAPP_WS_URL: wire.url },
    senderEnv: { ACCOUNT_HOLD_EVERY_MS: '1000', ACCOUNT_CONNECTS_PER_SECOND: '20', SEND_TIMEOUT_MS: '5000', SENDS_PER_JOB: '1' },
  });
  redis = createRedis(REDIS_URL, 'test-held-job-routes');
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await redis?.quit();
  await wire?.close();
}, 60_000);

/** Jobs a sender left to another replica (or found its account locked), by its metrics. */
async function leftElsewhere(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(/^metronome_job_outcomes_total\{outcome="lock-busy"[^}]*\} (\d+)/m.exec(text)?.[1] ?? NaN);
}

test("each next job of a run runs where its account's socket is open: a run lands on the other sender at most once", async () => {
  const token = (await createTenant(stack, 'held-job-routes')).body.token;
  const accounts: string[] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    const acc = await api(stack, 'POST', '/v1/accounts', token, { platform: 'whatsapp', name: `shop ${a}`, sendDelaySeconds: null, typing: null });
    accounts.push(acc.body.id);
    expect((await api(stack, 'PATCH', `/v1/accounts/${acc.body.id}`, token, { maxSendPerMinute: 60 })).status).toBe(200);
    const r = await api(stack, 'POST', `/v1/accounts/${acc.body.id}/session`, token, credsOnlyBundle(phoneOf(a)));
    expect(r.body).toEqual({ status: 'active' });
  }
  const pids = stack.senders.map((s) => String(s.child.pid));
  const holderPids = async () => (await redis.mget(accounts.map((id) => `${stack.keyPrefix}:account:${id}:socket`))).map((h) => (h ? h.split(':')[2]! : null));
  await eventually(
    'the accounts spread over the two senders, each connected once',
    async () => {
      const held = await holderPids();
      return pids.every((p) => held.filter((h) => h === p).length === ACCOUNTS / 2) && accounts.every((_, a) => wire.live(phoneOf(a)) === 1);
    },
    30_000,
    100,
  );
  const heldBefore = await holderPids();
  const leftBefore = await Promise.all(stack.senderMetricsPorts.map(leftElsewhere));

  const runs: string[] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    const c = await api(stack, 'POST', '/v1/campaigns', token, {
      accountId: accounts[a],
      name: `six people ${a}`,
      timezone: 'UTC',
      schedule: { type: 'once', at: new Date().toISOString() },
      messages: [{ type: 'text', text: `Our shop ${a} opens at nine` }],
      targets: Array.from({ length: TARGETS }, (_, t) => personOf(a, t)),
      active: false,
    });
    runs.push((await api(stack, 'POST', `/v1/campaigns/${c.body.id}/runs`, token)).body.id);
  }
  expect((await runsToEnd(stack, token, runs, 60_000, 200)).map((r) => r.status)).toEqual(runs.map(() => 'success'));

  const left = (await Promise.all(stack.senderMetricsPorts.map(leftElsewhere))).reduce((n, l, i) => n + l - leftBefore[i]!, 0);
  console.log(`${ACCOUNTS} runs of ${TARGETS} jobs each: ${left} jobs landed on the sender not holding their account`);
  expect(await holderPids()).toEqual(heldBefore);
  expect(left).toBeLessThanOrEqual(ACCOUNTS);
  // every person got the one message once
  for (let a = 0; a < ACCOUNTS; a++)
    expect(
      wire.messages
        .filter((m) => m.from === phoneOf(a))
        .map((m) => m.to)
        .sort(),
    ).toEqual(Array.from({ length: TARGETS }, (_, t) => personOf(a, t)).sort());
}, 120_000);
