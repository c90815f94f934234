import { startService, type ServiceProcess } from '@metronome/testkit';
import { signatureValid, WebhookReceiver } from '../api/webhooks-receiver.js';
import { api, runsToEnd, startStack, type Stack } from '../helpers/stack.js';
import { eventually, REDIS_URL } from '../helpers/test-env.js';

// Webhooks with real processes: a run goes through the scheduler, a sender and the sandbox
// while the receiver is down; the API (the only deliverer) is killed with SIGKILL mid-backoff
// and started again; the receiver comes back. Every status change of the run and the account
// arrives once per webhook-id, signed, in the order the run went through its statuses.

let stack: Stack;
let receiver: WebhookReceiver;
let webhookEnv: Record<string, string>;
const restarted: ServiceProcess[] = [];

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  await receiver.down();
  webhookEnv = {
    WEBHOOK_ALLOWED_HOSTS: `*, 127.0.0.1:${receiver.port}`,
    WEBHOOK_RETRY_BASE_MS: '300',
    WEBHOOK_RETRY_MAX_MS: '1500',
    WEBHOOK_TIMEOUT_MS: '1000',
    WEBHOOK_POLL_MS: '100',
  };
  stack = await startStack({ senders: 1, env: webhookEnv });
}, 60_000);
afterAll(async () => {
  await Promise.all(restarted.map((s) => s.stop()));
  await stack?.stop();
  await receiver?.close();
}, 60_000);

interface Delivery {
  id: string;
  status: string;
  attempts: number;
  error: string | null;
  subjectId: string;
}

test('nothing is lost when the receiver is down and the API is killed mid-backoff: once per webhook-id, signed, in order', async () => {
  const tenant = await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name: 'Hooked' });
  const token: string = tenant.body.token;
  const hook = await api(stack, 'POST', '/v1/webhooks', token, { url: receiver.url, events: ['run.status', 'account.status'] });
  expect(hook.status).toBe(201);
  const secret: string = hook.body.secret;
  const account = await api(stack, 'POST', '/v1/accounts', token, {
    platform: 'http',
    credentials: { apiKey: 'sandbox-api-key-0001' },
    name: 'A',
    externalId: 'hooked-a',
    maxSendPerMinute: 6000,
  });
  expect(account.status).toBe(201);
  const campaign = await api(stack, 'POST', '/v1/campaigns', token, {
    accountId: account.body.id,
    name: 'Hooked',
    timezone: 'Asia/Kuala_Lumpur',
    schedule: { type: 'once', at: new Date().toISOString() },
    messages: [{ type: 'text', text: 'Hello' }],
    targets: ['chat-1', 'chat-2', 'chat-3'],
  });
  expect(campaign.status).toBe(201);
  const runId = await eventually('the run to be created', async () => {
    const runs = await api(stack, 'GET', `/v1/runs?campaignId=${campaign.body.id}`, token);
    return runs.body.items[0]?.id as string | undefined;
  });
  const [run] = await runsToEnd(stack, token, [runId], 60_000, 250);
  expect(run!.status).toBe('success');

  // the receiver has been down all along: wait for retries in backoff, then kill the deliverer
  const deliveries = () => api<{ items: Delivery[] }>(stack, 'GET', `/v1/webhooks/${hook.body.id}/deliveries`, token);
  await eventually('deliveries retrying', async () => {
    const items = (await deliveries()).body.items;
    return items.some((d) => d.attempts >= 2 && d.error === 'connection refused');
  });
  const apiProcess = stack.services.find((s) => s.name === 'api')!;
  await apiProcess.stop('SIGKILL');
  expect(receiver.connections).toBe(0);
  const pending = await stack.db.db.selectFrom('webhook_deliveries').select(['id', 'status']).where('webhook_id', '=', hook.body.id).execute();
  expect(pending.length).toBeGreaterThanOrEqual(4);
  expect(pending.every((d) => d.status === 'pending')).toBe(true);

  await receiver.up();
  const port = new URL(stack.apiUrl).port;
  const again = startService('api-restarted', 'services/control-api/dist/server.js', {
    DATABASE_URL: stack.db.url,
    REDIS_URL,
    KEY_PREFIX: stack.keyPrefix,
    PORT: port,
    HOST: '127.0.0.1',
    ADMIN_TOKEN: stack.adminToken,
    MIN_INTERVAL_SECONDS: '1',
    ...webhookEnv,
  });
  restarted.push(again);
  await again.waitForLog((l) => l['msg'] === 'control-api listening');

  const done = await eventually(
    'every delivery delivered',
    async () => {
      const items = (await deliveries()).body.items;
      return items.length === pending.length && items.every((d) => d.status === 'delivered') ? items : null;
    },
    60_000,
    200,
  );
  // once per webhook-id, and each a delivery of the outbox
  expect(receiver.received.map((r) => r.id).sort()).toEqual(done.map((d) => d.id).sort());
  for (const r of receiver.received) expect({ id: r.id, valid: signatureValid(secret, r) }).toEqual({ id: r.id, valid: true });
  // the run's statuses in the order PostgreSQL recorded them (run_events), and the account's creation
  const history = await stack.db.db.selectFrom('run_events').select('status').where('run_id', '=', runId).orderBy('id').execute();
  expect(history.map((h) => h.status)).toEqual(expect.arrayContaining(['queued', 'running', 'success']));
  expect(receiver.received.filter((r) => r.payload.type === 'run.status').map((r) => r.payload.data.status)).toEqual(history.map((h) => h.status));
  expect(receiver.received.filter((r) => r.payload.type === 'account.status').map((r) => r.payload.data)).toEqual([
    { accountId: account.body.id, platform: 'http', status: 'active', previousStatus: null, reason: null },
  ]);
  // the deliverer stops with the API: SIGTERM still exits 0
  expect(await again.stop()).toBe(0);
}, 120_000);
