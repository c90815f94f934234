import { api, createHttpAccount, createTenant, sandbox, stackForFile, type SandboxMessage } from '../helpers/stack.js';
import { busiestWindow } from '../helpers/platform-record.js';
import { flushPrefix } from '../helpers/redis-flush.js';
import { eventually } from '../helpers/test-env.js';

// The ban-safety kit end to end: two senders, a Redis flush in the middle, and the sandbox's ban
// model set just above each account's limits. Judged by what the sandbox received: no account
// exceeds its hourly cap or its warm-up's daily cap, no two sends of one account are closer than
// sendDelaySeconds.min, and no account is banned; the same load on an account with the kit off
// is banned (so the ban model, and this test, can fail).

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const stack = stackForFile({ senders: 2 });

async function sandboxPut(path: string, body: unknown): Promise<void> {
  const res = await fetch(`${stack.sandboxUrl}${path}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`sandbox PUT ${path} → ${res.status} ${await res.text()}`);
}

const chats = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
const timesOf = async (externalId: string) =>
  (await sandbox<{ items: SandboxMessage[] }>(stack, `/sandbox/messages?account=${externalId}`)).items.map((m) => m.receivedAt);
const banOf = async (externalId: string) =>
  (await sandbox<{ items: { account: string; banned: unknown }[] }>(stack, '/sandbox/accounts')).items.find((a) => a.account === externalId)?.banned ?? null;
const minGap = (times: number[]) => Math.min(...times.slice(1).map((t, i) => t - times[i]!));

test('two senders and a Redis flush: caps, warm-up and the human gap hold at the platform; no account is banned, the kit-off account is', async () => {
  const tenant = (await createTenant(stack, 'ban-safety')).body;
  const create = async (externalId: string, settings: Record<string, unknown>) => {
    const res = await createHttpAccount(stack, tenant.token, { name: externalId, externalId, maxSendPerMinute: 300, ...settings });
    expect(res.status).toBe(201);
    return res.body;
  };
  // A: human pacing 1–2 s and 8 an hour; B: 1 s and a warm-up of 5 a day; C: the kit off
  const a = await create('safe-a', { sendDelaySeconds: { min: 1, max: 2 }, hourlyCap: 8 });
  const b = await create('safe-b', { sendDelaySeconds: { min: 1, max: 1 }, dailyCap: 50, warmup: { steps: [{ afterDays: 0, dailyCap: 5 }] } });
  const c = await create('unsafe-c', {});
  expect(b.warmup.capToday).toBe(5);
  // the platform's hidden limits, just above each account's own
  await sandboxPut('/sandbox/accounts/safe-a', { banHourlyCap: 9, banMinGapMs: 1_000 });
  await sandboxPut('/sandbox/accounts/safe-b', { banDailyCap: 6, banMinGapMs: 1_000 });
  await sandboxPut('/sandbox/accounts/unsafe-c', { banHourlyCap: 9, banMinGapMs: 1_000 });

  const campaign = async (account: { id: string }, targets: string[]) => {
    const res = await api(stack, 'POST', '/v1/campaigns', tenant.token, {
      accountId: account.id,
      name: `to ${targets.length} chats`,
      timezone: 'UTC',
      schedule: { type: 'once', at: new Date().toISOString() },
      messages: [{ type: 'text', text: 'hello' }],
      targets,
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const campaignA = await campaign(a, chats('a', 12));
  const campaignB = await campaign(b, chats('b', 10));
  const campaignC = await campaign(c, chats('c', 12));

  const runOf = async (campaignId: string) => (await api(stack, 'GET', `/v1/runs?campaignId=${campaignId}`, tenant.token)).body.items[0];
  await eventually('account A half-way to its cap', async () => (await timesOf('safe-a')).length >= 3, 60_000, 100);
  expect(await flushPrefix(stack.keyPrefix)).toBeGreaterThan(0);

  let seen = '';
  await eventually(
    'A and B at their caps',
    async () => {
      const [sa, sb] = [await timesOf('safe-a'), await timesOf('safe-b')];
      seen = `A ${sa.length}/8, B ${sb.length}/5`;
      return sa.length >= 8 && sb.length >= 5;
    },
    120_000,
    250,
  ).catch(async (error: Error) => {
    // told when it times out: how far each got, and the runs' states (asked once here, not on every poll)
    const state = async (id: string) => ((r) => r?.waiting ?? r?.status)(await runOf(id).catch(() => undefined));
    const runs = await Promise.all([campaignA, campaignB].map(state));
    throw new Error(`${error.message} (${seen}; runs ${JSON.stringify(runs)})`);
  });
  // the runs wait for the caps' windows, and nothing more goes out meanwhile
  await eventually('A to wait for its cap', async () => (await runOf(campaignA))?.waiting?.reason === 'cap', 30_000, 250);
  await new Promise((r) => setTimeout(r, 3_000));

  const sentA = await timesOf('safe-a');
  const sentB = await timesOf('safe-b');
  expect(sentA).toHaveLength(8);
  expect(sentB).toHaveLength(5);
  expect(busiestWindow(sentA, HOUR).most).toBeLessThanOrEqual(8);
  expect(busiestWindow(sentB, DAY).most).toBeLessThanOrEqual(5);
  expect(minGap(sentA)).toBeGreaterThanOrEqual(1_000);
  expect(minGap(sentB)).toBeGreaterThanOrEqual(1_000);
  // random, not a fixed interval: A's gaps spread over its 1–2 s range
  const gapsA = sentA.slice(1).map((t, i) => t - sentA[i]!);
  expect(Math.max(...gapsA) - Math.min(...gapsA)).toBeGreaterThan(200);
  expect(await banOf('safe-a')).toBeNull();
  expect(await banOf('safe-b')).toBeNull();
  const runA = await runOf(campaignA);
  expect(runA.waiting).toMatchObject({ reason: 'cap' });
  expect(Date.parse(runA.waiting.until)).toBeGreaterThan(Date.now() + HOUR - 60_000);
  expect((await runOf(campaignB)).waiting).toMatchObject({ reason: 'cap' });

  // The same load with the kit off: banned, and the account then answers as a banned number does.
  expect(await banOf('unsafe-c')).toMatchObject({ reason: expect.any(String) });
  const accountC = await eventually(
    'C to be disconnected',
    async () => {
      const got = (await api(stack, 'GET', `/v1/accounts/${c.id}`, tenant.token)).body;
      return got.status === 'disconnected' ? got : null;
    },
    30_000,
    250,
  );
  expect(accountC.status).toBe('disconnected');
  expect(await runOf(campaignC)).toMatchObject({ status: 'paused', pausedReason: 'account_unavailable' });
}, 240_000);
