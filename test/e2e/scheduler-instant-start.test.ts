import { scrapeSum } from '@metronome/testkit';
import { api, sandbox, startStack, type Stack, type SandboxMessage } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';

// Instant starts: creating or activating a campaign whose occurrence is due, and run now, start
// without waiting for a scheduler tick. The scheduler ticks only every 60 s here (the most
// SCHEDULER_TICK_MS allows), right when it starts and then a minute later; every run below
// must reach the sandbox within 30 s of its request, which only the API's own run and job
// (INSTANT_STARTS=create, the default) can do; what the API leaves to the scheduler (a campaign
// outside its window) reaches it through the API's nudge to the leader. Real processes;
// delivery checked at the sandbox.

const TICK_MS = 60_000;
const WAIT_MS = 30_000;
let stack: Stack;
let token: string;
let accountId: string;
let startedAt: number;
beforeAll(async () => {
  startedAt = Date.now();
  stack = await startStack({ senders: 1, schedulerEnv: { SCHEDULER_TICK_MS: String(TICK_MS) }, prism: true });
  token = (await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name: 'instant' })).body.token;
  accountId = (
    await api(stack, 'POST', '/v1/accounts', token, {
      platform: 'http',
      credentials: { apiKey: 'sandbox-api-key-0001' },
      name: 'a',
      externalId: 'instant-a',
      maxSendPerMinute: 6000,
    })
  ).body.id;
}, 60_000);
afterAll(async () => {
  await stack?.stop();
}, 60_000);

const body = (name: string, active = true) => ({
  accountId,
  name,
  timezone: 'UTC',
  schedule: { type: 'interval', everySeconds: 3600 },
  messages: [{ type: 'text', text: name }],
  targets: [`${name}-1`, `${name}-2`],
  active,
});

const wakes = () => scrapeSum(`http://127.0.0.1:${stack.schedulerMetricsPort}/metrics`, 'metronome_scheduler_actions_total', 'action="wake"');

/** Both chats of `name` received its message; the runs of the campaign. */
async function delivered(campaignId: string, name: string): Promise<{ scheduledAt: string; trigger: string }[]> {
  await eventually(
    `${name} to reach the sandbox`,
    async () => {
      const { items } = await sandbox<{ items: SandboxMessage[] }>(stack, '/sandbox/messages?account=instant-a');
      return items.filter((m) => m.part.text === name).length === 2;
    },
    WAIT_MS,
    200,
  );
  return (await api(stack, 'GET', `/v1/runs?campaignId=${campaignId}`, token)).body.items;
}

test('a campaign created due now starts at once, the API creating its run, with one run for its occurrence', async () => {
  const before = await wakes();
  const created = await api(stack, 'POST', '/v1/campaigns', token, body('created'));
  expect(created.status).toBe(201);
  const runs = await delivered(created.body.id, 'created');
  // Delivered before the scheduler's second regular tick (it started after startedAt and ticks
  // every 60 s): only a tick brought forward can have made this run.
  expect(Date.now() - startedAt).toBeLessThan(TICK_MS);
  expect(await wakes()).toBe(before); // no tick was needed
  expect(runs).toHaveLength(1);
  expect(runs[0]).toMatchObject({ trigger: 'schedule', scheduledAt: created.body.nextRunAt });
}, 90_000);

test('activating a campaign whose occurrence is due starts it at once', async () => {
  const created = await api(stack, 'POST', '/v1/campaigns', token, body('activated', false));
  expect(created.body.nextRunAt).toBeNull();
  const before = await wakes();
  const on = await api(stack, 'PATCH', `/v1/campaigns/${created.body.id}`, token, { active: true });
  expect(on.status).toBe(200);
  const runs = await delivered(created.body.id, 'activated');
  expect(runs).toHaveLength(1);
  expect(runs[0]!.scheduledAt).toBe(on.body.nextRunAt);
  expect(await wakes()).toBe(before);
}, 90_000);

test('a campaign created due outside its window is left to the scheduler, which the nudge brings forward at once', async () => {
  const hour = new Date().getUTCHours();
  const at = (h: number) => `${String(h % 24).padStart(2, '0')}:00`;
  const before = await wakes();
  const created = await api(stack, 'POST', '/v1/campaigns', token, { ...body('shut'), deliveryWindow: { start: at(hour + 2), end: at(hour + 3) } });
  expect(created.status).toBe(201);
  // only a tick moves a due campaign to its window's next opening; the regular one is a minute away
  const moved = await eventually(
    'the nudged tick to move the campaign to its window',
    async () => {
      const c = (await api(stack, 'GET', `/v1/campaigns/${created.body.id}`, token)).body;
      return c.nextRunAt !== created.body.nextRunAt ? c : null;
    },
    WAIT_MS,
    200,
  );
  expect(new Date(moved.nextRunAt).getUTCHours()).toBe((hour + 2) % 24);
  expect(Date.now() - startedAt).toBeLessThan(TICK_MS);
  expect(await wakes()).toBeGreaterThan(before);
  expect((await api(stack, 'GET', `/v1/runs?campaignId=${created.body.id}`, token)).body.items).toEqual([]);
}, 90_000);

test('run now starts at once without the scheduler (the API queues its job)', async () => {
  const created = await api(stack, 'POST', '/v1/campaigns', token, body('manual', false));
  const run = await api(stack, 'POST', `/v1/campaigns/${created.body.id}/runs`, token);
  expect(run.status).toBe(201);
  const runs = await delivered(created.body.id, 'manual');
  expect(runs.map((r) => r.trigger)).toEqual(['manual']);
}, 90_000);

test('run now of an interval campaign: by default its chats wait for the interval; with ignoreInterval they get it now', async () => {
  const created = await api(stack, 'POST', '/v1/campaigns', token, body('interval'));
  await delivered(created.body.id, 'interval'); // its first occurrence reached both chats
  const held = await api(stack, 'POST', `/v1/campaigns/${created.body.id}/runs`, token);
  expect(held.status).toBe(201);
  expect(held.body).toMatchObject({ ignoredInterval: false, waiting: { reason: 'interval_gate' } });
  // held for the hour since the first delivery (by the sender's own claim rule, at the sandbox: nothing new)
  const targets = (await api(stack, 'GET', `/v1/runs/${held.body.id}/targets`, token)).body.items as { status: string; nextAttemptAt: string }[];
  for (const t of targets)
    expect({ status: t.status, heldMs: Date.parse(t.nextAttemptAt) - Date.now() > 3_000_000 }).toEqual({ status: 'pending', heldMs: true });
  expect((await api(stack, 'POST', `/v1/runs/${held.body.id}/cancel`, token)).status).toBe(202);

  const now = await api(stack, 'POST', `/v1/campaigns/${created.body.id}/runs`, token, { ignoreInterval: true });
  expect(now.status).toBe(201);
  expect(now.body.ignoredInterval).toBe(true);
  await eventually(
    'the run that ignores the interval to reach both chats again',
    async () => {
      const { items } = await sandbox<{ items: SandboxMessage[] }>(stack, '/sandbox/messages?account=instant-a');
      return items.filter((m) => m.part.text === 'interval').length === 4;
    },
    WAIT_MS,
    200,
  );
  const run = await eventually(
    'the run to finish',
    async () => {
      const r = (await api(stack, 'GET', `/v1/runs/${now.body.id}`, token)).body;
      return r.status === 'success' ? r : null;
    },
    WAIT_MS,
    200,
  );
  expect(run).toMatchObject({ ignoredInterval: true, counts: { sent: 2 } });
}, 90_000);
