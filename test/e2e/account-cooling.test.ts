import { scrapeSum } from '@metronome/testkit';
import { openEventStream, type EventStream } from '../helpers/sse-client.js';
import { api, sandbox, startStack, type Stack, runsToEnd } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';

// Automatic cooling across the real processes: the sandbox answers one flood wait; with K = 0
// (COOLING_FLOOD_WAITS_PER_HOUR) that cools the account for 4 s. The platform receives nothing
// from it meanwhile, /v1/events announces the cooling (reason, until) and its end (the
// scheduler's reconciler), the run finishes, and the account keeps a halved pace.

const RECEIVER = 'cool-acc';

let stack: Stack;
let events: EventStream | null = null;
beforeAll(async () => {
  stack = await startStack({ senders: 1, env: { COOLING_FLOOD_WAITS_PER_HOUR: '0', COOLING_DURATION: '4s', COOLING_RECOVERY_INTERVAL: '1h' } });
}, 60_000);
afterAll(async () => {
  events?.close();
  await stack?.stop();
}, 60_000);

test('a flood wait cools the account: nothing reaches the platform until the cooling ends, both changes are announced, and the run finishes at a halved pace', async () => {
  const tenant = await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name: 'cooling' });
  const token: string = tenant.body.token;
  const acc = await api(stack, 'POST', '/v1/accounts', token, {
    platform: 'http',
    credentials: { apiKey: 'sandbox-api-key-0001' },
    name: 'c',
    externalId: RECEIVER,
    maxSendPerMinute: 600,
    groupConcurrency: 1,
  });
  expect(acc.status).toBe(201);
  events = await openEventStream(stack.apiUrl, token);
  const targets = Array.from({ length: 40 }, (_, i) => `chat-${i}`);
  const campaign = await api(stack, 'POST', '/v1/campaigns', token, {
    accountId: acc.body.id,
    name: 'c',
    timezone: 'UTC',
    schedule: { type: 'once', at: new Date().toISOString() },
    messages: [{ type: 'text', text: 'hi' }],
    targets,
    active: false,
  });
  const run = await api(stack, 'POST', `/v1/campaigns/${campaign.body.id}/runs`, token);
  expect(run.status).toBe(201);
  await eventually('the fan-out to start', async () => ((await sandbox(stack, '/sandbox/stats')).accepted as number) >= 5, 30_000, 20);
  const put = await fetch(`${stack.sandboxUrl}/sandbox/accounts/${RECEIVER}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ floodWaitSeconds: 1 }),
  });
  expect(put.ok).toBe(true);

  const cooled = await eventually(
    'the cooling event',
    async () => events!.events.find((e) => e.event === 'account' && e.data.status === 'cooling'),
    30_000,
    20,
  );
  expect(cooled.data).toMatchObject({ accountId: acc.body.id, reason: 'flood_waits', until: expect.any(String) });
  const during = await api(stack, 'GET', `/v1/runs/${run.body.id}`, token);
  expect(during.body.waiting).toMatchObject({ reason: 'cooling', until: cooled.data.until });

  const [done] = await runsToEnd(stack, token, [run.body.id], 60_000, 200);
  expect(done!.status).toBe('success');
  const ended = events.events.find((e) => e.event === 'account' && e.data.status === 'active');
  expect(ended?.data).toEqual({ accountId: acc.body.id, status: 'active' });

  const until = Date.parse(cooled.data.until);
  const { items: rejections } = await sandbox<{ items: { at: number; reason: string }[] }>(stack, `/sandbox/rejections?account=${RECEIVER}`);
  const firstFlood = Math.min(...rejections.filter((r) => r.reason === 'flood_wait').map((r) => r.at));
  const { times } = await sandbox<{ times: number[] }>(stack, `/sandbox/accounts/${RECEIVER}/sends`);
  expect(times).toHaveLength(40);
  expect(times.filter((t) => t > firstFlood && t < until)).toEqual([]);
  expect(times.filter((t) => t >= until).length).toBeGreaterThan(0);

  const account = await api(stack, 'GET', `/v1/accounts/${acc.body.id}`, token);
  expect(account.body).toMatchObject({ status: 'active', cooling: null, maxSendPerMinute: 600, effectiveMaxSendPerMinute: 300 });
  const counted = await scrapeSum(`http://127.0.0.1:${stack.senderMetricsPorts[0]}/metrics`, 'metronome_account_cooling_total', 'reason="flood_waits"');
  expect(counted).toBe(1);
}, 120_000);
