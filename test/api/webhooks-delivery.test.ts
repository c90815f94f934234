import { WebhookDeliveryRepository } from '@metronome/db';
import { createLogger } from '@metronome/observability';
import type { WebhookConfig } from '../../services/control-api/src/config.js';
import { createWebhookDeliverer, type WebhookDeliverer } from '../../services/control-api/src/webhooks/webhook-deliverer.js';
import { call, createAccount, createCampaign, createTenant, fields, NOW, seedRun, startApi, type Api, type Tenant } from './harness.js';
import { signatureValid, WebhookReceiver } from './webhooks-receiver.js';

// The outbox delivered over real HTTP to real receivers, on the test's clock: outages, order,
// signatures checked by an independent implementation, the allow-list after DNS, the 24 h end
// of retries, redelivery, two replicas, and a deliverer that died holding a delivery.

let api: Api;
let receiver: WebhookReceiver;
let config: WebhookConfig;
const logger = createLogger('webhooks-test', 'silent');

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  config = {
    allowedHosts: [
      { host: '*', port: null },
      { host: '127.0.0.1', port: receiver.port },
    ],
    retryBaseMs: 1_000,
    retryMaxMs: 60_000,
    timeoutMs: 5_000,
    pollMs: 100,
  };
  api = await startApi('api_webhook_delivery', { webhooks: config });
}, 30_000);
afterAll(async () => {
  await receiver.close();
  await api.close();
});

function deliverer(owner: string, overrides: Partial<WebhookConfig> = {}): WebhookDeliverer {
  return createWebhookDeliverer({
    repo: new WebhookDeliveryRepository(api.db),
    clock: api.clock,
    logger,
    config: { ...config, ...overrides },
    secretsKeys: [api.config.secretsKey],
    owner,
    random: () => 0.5,
  });
}

async function newHook(tenant: Tenant, url: string, events = ['run.status', 'account.status']): Promise<{ id: string; secret: string }> {
  const res = await call(api, 'POST', '/v1/webhooks', tenant.token, { url, events });
  expect(res.status).toBe(201);
  return { id: res.body.id, secret: res.body.secret };
}

const outbox = (webhookId: string) =>
  api.db
    .selectFrom('webhook_deliveries')
    .select(['id', 'status', 'attempts', 'subject_id', 'seq', 'last_error'])
    .where('webhook_id', '=', webhookId)
    .orderBy('seq')
    .execute();

/** Passes on the test's clock until every delivery of `webhookId` is settled, moving the clock to the next attempt when idle. */
async function drain(d: WebhookDeliverer, webhookId: string, stepMs: number, maxPasses = 500): Promise<void> {
  for (let i = 0; i < maxPasses; i++) {
    if ((await outbox(webhookId)).every((r) => r.status !== 'pending')) return;
    if ((await d.deliverDue()) === 0) api.clock.advance(stepMs);
  }
  throw new Error('the outbox did not drain');
}

test('a receiver down for 2 minutes, then back, gets every event once per webhook-id, signed, in order per run', async () => {
  const tenant = await createTenant(api, 'outage');
  const hook = await newHook(tenant, receiver.url);
  const campaign = await createCampaign(api, tenant);
  const runA = await seedRun(api, campaign.id, 'queued', { 'chat-1': 'pending' });
  const runB = await seedRun(api, (await createCampaign(api, tenant)).id, 'paused', { 'chat-2': 'pending' });
  const setStatus = (id: string, status: 'running' | 'success' | 'partial' | 'queued') =>
    api.db.updateTable('runs').set({ status }).where('id', '=', id).execute();
  await setStatus(runA.id, 'running');
  await setStatus(runB.id, 'queued');
  await setStatus(runA.id, 'success');
  await setStatus(runB.id, 'running');
  await setStatus(runB.id, 'partial');
  await call(api, 'PATCH', `/v1/accounts/${campaign.accountId}`, tenant.token, { status: 'disabled' });
  const owed = await outbox(hook.id);
  expect(owed).toHaveLength(10); // two accounts created, one disabled; 3 of run A, 4 of run B

  await receiver.down();
  const d = deliverer('replica-1');
  for (let elapsed = 0; elapsed <= 120_000; elapsed += 5_000) {
    await d.deliverDue();
    api.clock.advance(5_000);
  }
  expect(receiver.received).toEqual([]);
  const during = await outbox(hook.id);
  expect(during.every((r) => r.status === 'pending')).toBe(true);
  // only the earliest event of each run and of the account was tried: a later one never goes first
  const tried = during.filter((r) => r.attempts > 0);
  expect(tried.map((r) => r.subject_id).sort()).toEqual([...new Set(during.map((r) => r.subject_id))].sort());
  expect(tried).toHaveLength(4);
  expect(tried.every((r) => r.attempts >= 5 && r.last_error === 'connection refused')).toBe(true);
  const listed = (await call(api, 'GET', `/v1/webhooks/${hook.id}/deliveries`, tenant.token)).body.items;
  const head = listed.find((x: { subjectId: string; attempts: number }) => x.subjectId === runA.id && x.attempts > 0);
  expect(head).toMatchObject({ status: 'pending', httpStatus: null, error: 'connection refused' });
  expect(Date.parse(head.nextAttemptAt)).toBeGreaterThan(api.clock.now() - 60_000);

  await receiver.up();
  await drain(d, hook.id, 60_000);

  const after = await outbox(hook.id);
  expect(after.every((r) => r.status === 'delivered')).toBe(true);
  const mine = receiver.received.filter((r) => after.some((o) => o.id === r.id));
  // once per webhook-id, each the outbox row's id
  expect(mine.map((r) => r.id).sort()).toEqual(after.map((r) => r.id).sort());
  for (const r of mine) {
    expect({ id: r.id, valid: signatureValid(hook.secret, r) }).toEqual({ id: r.id, valid: true });
    expect(Number(r.timestamp)).toBeGreaterThanOrEqual(Math.floor(NOW / 1000));
  }
  // a signature made with another secret does not pass: the check can fail
  expect(signatureValid(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, mine[0]!)).toBe(false);
  expect(signatureValid(hook.secret, { ...mine[0]!, body: mine[0]!.body.replace('}', ' }') })).toBe(false);
  const statusesOf = (id: string) => mine.filter((r) => r.payload.data.runId === id).map((r) => r.payload.data.status);
  expect(statusesOf(runA.id)).toEqual(['queued', 'running', 'success']);
  expect(statusesOf(runB.id)).toEqual(['paused', 'queued', 'running', 'partial']);
  expect(mine.filter((r) => r.payload.data.accountId === campaign.accountId && r.payload.type === 'account.status').map((r) => r.payload.data.status)).toEqual([
    'active',
    'disabled',
  ]);
  expect(mine[0]!.payload).toEqual({ type: expect.any(String), timestamp: expect.any(String), data: expect.any(Object) });
  const delivered = (await call(api, 'GET', `/v1/webhooks/${hook.id}/deliveries`, tenant.token)).body.items;
  expect(
    delivered.every(
      (x: { status: string; httpStatus: number; error: null; nextAttemptAt: null }) =>
        x.status === 'delivered' && x.httpStatus === 200 && x.error === null && x.nextAttemptAt === null,
    ),
  ).toBe(true);
}, 60_000);

test('a host not allowed receives nothing: a literal address is refused at create, a name resolving to loopback at delivery', async () => {
  const tenant = await createTenant(api, 'disallowed');
  const other = await WebhookReceiver.start();
  try {
    const literal = await call(api, 'POST', '/v1/webhooks', tenant.token, { url: other.url, events: ['account.status'] });
    expect(literal.status).toBe(400);
    expect(fields(literal)).toEqual(['url']);
    // `localhost` passes `*` at create (a name); at delivery it resolves to a loopback address
    const hook = await newHook(tenant, `http://localhost:${other.port}/hook`, ['account.status']);
    await createAccount(api, tenant);
    const d = deliverer('replica-1');
    for (let i = 0; i < 10; i++) {
      await d.deliverDue();
      api.clock.advance(60_000);
    }
    expect(other.connections).toBe(0);
    const [row] = await outbox(hook.id);
    expect(row).toMatchObject({ status: 'pending' });
    expect(row!.attempts).toBeGreaterThanOrEqual(3);
    expect(row!.last_error).toMatch(/^refused: localhost resolved to (127\.0\.0\.1|::1)/);

    // the same delivery, allowed by name, does arrive: the receiver above was reachable all along
    const allowed = deliverer('replica-2', { allowedHosts: [{ host: 'localhost', port: other.port }] });
    await drain(allowed, hook.id, 60_000);
    expect(other.received.map((r) => r.id)).toEqual([row!.id]);
  } finally {
    await other.close();
  }
}, 60_000);

test('retries end 24 h after the first attempt (failed); redeliver sends the same webhook-id again', async () => {
  const tenant = await createTenant(api, 'give-up');
  const hook = await newHook(tenant, receiver.url, ['account.status']);
  await createAccount(api, tenant);
  receiver.status = 500;
  const d = deliverer('replica-1', { retryMaxMs: 3_600_000 });
  const started = api.clock.now();
  try {
    await drain(d, hook.id, 3_600_000);
  } finally {
    receiver.status = 200;
  }
  const [row] = await outbox(hook.id);
  expect(row!.status).toBe('failed');
  expect(api.clock.now() - started).toBeGreaterThan(23 * 3_600_000);
  const listed = (await call(api, 'GET', `/v1/webhooks/${hook.id}/deliveries`, tenant.token)).body.items[0];
  expect(listed).toMatchObject({ status: 'failed', httpStatus: 500, error: 'answered HTTP 500', nextAttemptAt: null, deliveredAt: null });
  expect(listed.attempts).toBeGreaterThanOrEqual(10);

  const again = await call(api, 'POST', `/v1/webhooks/${hook.id}/deliveries/${row!.id}/redeliver`, tenant.token);
  expect(again.status).toBe(202);
  await drain(d, hook.id, 60_000);
  expect(receiver.received.filter((r) => r.id === row!.id)).toHaveLength(1);
  const done = (await call(api, 'GET', `/v1/webhooks/${hook.id}/deliveries`, tenant.token)).body.items[0];
  expect(done).toMatchObject({ id: row!.id, status: 'delivered', httpStatus: 200 });
}, 60_000);

test('two replicas delivering at once send each delivery once, and each account in order', async () => {
  const tenant = await createTenant(api, 'replicas');
  const hook = await newHook(tenant, receiver.url, ['account.status']);
  const accounts = [await createAccount(api, tenant), await createAccount(api, tenant), await createAccount(api, tenant)];
  for (let i = 0; i < 4; i++) {
    for (const id of accounts)
      await api.db
        .updateTable('accounts')
        .set({ status: i % 2 === 0 ? 'disabled' : 'active' })
        .where('id', '=', id)
        .execute();
  }
  const [one, two] = [deliverer('replica-1'), deliverer('replica-2')];
  for (let i = 0; i < 100 && (await outbox(hook.id)).some((r) => r.status === 'pending'); i++) {
    await Promise.all([one.deliverDue(), two.deliverDue(), one.deliverDue(), two.deliverDue()]);
  }
  const rows = await outbox(hook.id);
  expect(rows).toHaveLength(15);
  expect(rows.every((r) => r.status === 'delivered' && r.attempts === 1)).toBe(true);
  const got = receiver.received.filter((r) => rows.some((o) => o.id === r.id));
  expect(got.map((r) => r.id).sort()).toEqual(rows.map((r) => r.id).sort());
  for (const id of accounts) {
    expect(got.filter((r) => r.payload.data.accountId === id).map((r) => r.payload.data.status)).toEqual([
      'active',
      'disabled',
      'active',
      'disabled',
      'active',
    ]);
  }
}, 60_000);

test('a delivery held by a deliverer that died is taken over once its lease expires', async () => {
  const tenant = await createTenant(api, 'takeover');
  const hook = await newHook(tenant, receiver.url, ['account.status']);
  await createAccount(api, tenant);
  const repo = new WebhookDeliveryRepository(api.db);
  const now = api.clock.now();
  const held = await repo.claim('dead-replica', new Date(now), new Date(now + 30_000), 100);
  expect(held.map((h) => h.webhookId)).toContain(hook.id);
  const d = deliverer('replica-1');
  await d.deliverDue();
  expect((await outbox(hook.id))[0]).toMatchObject({ status: 'pending', attempts: 0 });
  api.clock.advance(30_001);
  await drain(d, hook.id, 1_000);
  const [row] = await outbox(hook.id);
  expect(row).toMatchObject({ status: 'delivered', attempts: 1 });
  // the dead one's late word changes nothing
  expect(await repo.settle(row!.id, 'dead-replica', { status: 'failed', at: new Date(now), nextAttemptAt: null, httpStatus: null, error: 'late' })).toBe(false);
  expect(receiver.received.filter((r) => r.id === row!.id)).toHaveLength(1);
});
