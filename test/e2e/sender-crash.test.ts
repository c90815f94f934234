import { startService, type ServiceProcess } from '@metronome/testkit';
import { api, sandbox, startStack, type Stack, runsToEnd } from '../helpers/stack.js';
import { eventually, REDIS_URL } from '../helpers/test-env.js';

// Never twice, under crashes, with real processes: three senders fan 2,000 chats out over 20
// accounts while one of them is killed with SIGKILL five times (and restarted each time), the
// sandbox failing 5% of sends with a 500. The sandbox must see no (run, chat, part) twice,
// every run must finish, and a target may end `unknown` only if it was in flight at a kill.

const SENDER_CONCURRENCY = 4;
const GROUP_CONCURRENCY = 3;
const ACCOUNTS = 20;
const CHATS_PER_ACCOUNT = 100;
const KILLS = 5;

// One part; a short send timeout keeps the leases a killed sender leaves behind short (the
// lease is the send timeout plus 30 s of margin).
const senderEnv = { SENDER_CONCURRENCY: String(SENDER_CONCURRENCY), SEND_TIMEOUT_MS: '2000' };

let stack: Stack;
const restarted: ServiceProcess[] = [];
beforeAll(async () => {
  stack = await startStack({ senders: 3, senderEnv, sandboxEnv: { SANDBOX_LATENCY_MS: '20', SANDBOX_FAULT_RATE: '0.05' } });
}, 60_000);
afterAll(async () => {
  await Promise.all(restarted.map((s) => s.stop()));
  await stack?.stop();
}, 60_000);

function startSender(n: number): ServiceProcess {
  return startService(`sender-restarted-${n}`, 'services/sender/dist/main.js', {
    DATABASE_URL: stack.db.url,
    REDIS_URL,
    KEY_PREFIX: stack.keyPrefix,
    METRICS_PORT: '0',
    HTTP_TRANSPORT_URL: stack.sandboxUrl,
    ...senderEnv,
  });
}

/** The (run, chat) of every target in flight right now, across every replica. */
async function inFlightNow(): Promise<Set<string>> {
  const rows = await stack.db.db.selectFrom('run_targets').select(['run_id', 'chat_id']).where('status', '=', 'in_flight').execute();
  return new Set(rows.map((r) => `${r.run_id}:${r.chat_id}`));
}

test('kill -9 of one of three senders, five times, mid fan-out: nothing twice, nothing lost, unknown only where in flight', async () => {
  const tenant = await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name: 'crash' });
  const token: string = tenant.body.token;
  const runIds: string[] = [];
  for (let a = 0; a < ACCOUNTS; a++) {
    // 300 a minute: each account's 100 chats take ~20 s, so the kills land mid fan-out
    const acc = await api(stack, 'POST', '/v1/accounts', token, { platform: 'http', name: `a${a}`, externalId: `crash-${a}`, maxSendPerMinute: 300, groupConcurrency: GROUP_CONCURRENCY });
    expect(acc.status).toBe(201);
    const targets = Array.from({ length: CHATS_PER_ACCOUNT }, (_, i) => `chat-${a}-${i}`);
    const c = await api(stack, 'POST', '/v1/campaigns', token, {
      accountId: acc.body.id, name: `c${a}`, timezone: 'UTC', schedule: { type: 'once', at: new Date().toISOString() }, messages: [{ type: 'text', text: 'hi' }], targets, active: false,
    });
    expect(c.status).toBe(201);
    const run = await api(stack, 'POST', `/v1/campaigns/${c.body.id}/runs`, token);
    expect(run.status).toBe(201);
    runIds.push(run.body.id);
  }

  // Kill the same replica slot each time, as soon as it is sending again.
  let victim = stack.senders[0]!;
  const inFlightAtKills: Set<string>[] = [];
  for (let k = 0; k < KILLS; k++) {
    const accepted = (await sandbox(stack, '/sandbox/stats')).accepted as number;
    // wait until the fan-out has moved on (and, after a restart, the new replica is working)
    await eventually('sends to go on', async () => ((await sandbox(stack, '/sandbox/stats')).accepted as number) > accepted + 50, 120_000, 50);
    victim.child.kill('SIGKILL');
    await victim.stop();
    // What the killed replica held is in flight now; the live replicas' sends are too, which
    // only widens the set a later `unknown` must belong to.
    inFlightAtKills.push(await inFlightNow());
    victim = startSender(k + 1);
    restarted.push(victim);
    await victim.waitForLog((l) => l['msg'] === 'sender ready');
  }

  // Every run finishes: the killed replica's leases expire and its runs' jobs come back.
  const runs = await runsToEnd(stack, token, runIds, 240_000, 500);

  for (const r of runs) expect(['success', 'partial']).toContain(r.status);

  // Zero duplicate deliveries at the sandbox: by its own count and by idempotency key.
  const stats = await sandbox(stack, '/sandbox/stats');
  expect(stats.duplicateKeys).toBe(0);
  const { items } = await sandbox<{ items: { idempotencyKey: string }[] }>(stack, '/sandbox/messages');
  const perKey = new Map<string, number>();
  for (const m of items) perKey.set(m.idempotencyKey, (perKey.get(m.idempotencyKey) ?? 0) + 1);
  expect([...perKey.values()].filter((n) => n > 1)).toEqual([]);

  // `unknown` only where a send was in flight at a kill, and per kill no more than the killed
  // replica could have had in flight: SENDER_CONCURRENCY jobs × groupConcurrency lanes, each
  // lane holding one chat (the claim takes one target; a delivered one is written with the
  // lane's next claim or when its job's lanes stop).
  const unknown = await stack.db.db.selectFrom('run_targets').select(['run_id', 'chat_id']).where('status', '=', 'unknown').execute();
  const seen = new Set<string>();
  for (const set of inFlightAtKills) {
    const fresh = unknown.filter((u) => set.has(`${u.run_id}:${u.chat_id}`) && !seen.has(`${u.run_id}:${u.chat_id}`));
    expect(fresh.length).toBeLessThanOrEqual(SENDER_CONCURRENCY * GROUP_CONCURRENCY);
    for (const u of fresh) seen.add(`${u.run_id}:${u.chat_id}`);
  }
  expect(unknown.filter((u) => !seen.has(`${u.run_id}:${u.chat_id}`))).toEqual([]);

  // Nothing lost: every chat is accounted for, and every sent one arrived exactly once.
  const counts = runs.reduce((acc, r) => ({ sent: acc.sent + r.counts.sent, unknown: acc.unknown + r.counts.unknown, failed: acc.failed + r.counts.failed }), { sent: 0, unknown: 0, failed: 0 });
  expect(counts.sent + counts.unknown + counts.failed).toBe(ACCOUNTS * CHATS_PER_ACCOUNT);
  const delivered = new Set(items.map((m) => m.idempotencyKey));
  const sentRows = await stack.db.db.selectFrom('run_targets').select(['run_id', 'chat_id']).where('status', '=', 'sent').execute();
  for (const t of sentRows) expect(delivered.has(`${t.run_id}:${t.chat_id}:0`)).toBe(true);
}, 420_000);
