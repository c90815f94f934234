import { Webhook } from 'standardwebhooks';
import { WebhookReceiver, type Received } from '../api/webhooks-receiver.js';
import { api, createHttpAccount, createTenant, runsToEnd, sandbox, startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';

// `message.status` webhooks end to end (CONTRACT §3 "Receipts", webhooks): two runs on two
// accounts of one tenant that subscribed; the sandbox posts delivery and read receipts (twice)
// to the API, whose deliverer sends them to a receiver on a real port. Each delivery is signed
// (checked with the Standard Webhooks library itself), names one run and carries only that
// run's chats; together they tell every chat's receipts as the API shows them. A tenant that
// subscribed to run.status alone hears no receipt.

let receiver: WebhookReceiver;
let stack: Stack;
beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  stack = await startStack({
    senders: 1,
    env: { WEBHOOK_ALLOWED_HOSTS: `*, 127.0.0.1:${receiver.port}`, WEBHOOK_POLL_MS: '100', WEBHOOK_RETRY_BASE_MS: '300', WEBHOOK_RETRY_MAX_MS: '1500' },
  });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
}, 60_000);

interface StatusTarget {
  chatId: string;
  deliveredAt: string | null;
  readAt: string | null;
}

const chats = (prefix: string) => Array.from({ length: 30 }, (_, i) => `${prefix}-${i + 1}`);

test('message.status: batched per run, signed, every receipt told; a tenant not subscribed hears none', async () => {
  const tenant = await createTenant(stack, 'Hooked receipts');
  const token: string = tenant.body.token;
  const hook = await api(stack, 'POST', '/v1/webhooks', token, { url: `${receiver.url}?t=receipts`, events: ['message.status'] });
  expect(hook.status).toBe(201);
  const other = await createTenant(stack, 'Runs only');
  const otherHook = await api(stack, 'POST', '/v1/webhooks', other.body.token, { url: `${receiver.url}?t=other`, events: ['run.status'] });
  expect(otherHook.status).toBe(201);

  const put = await fetch(`${stack.sandboxUrl}/sandbox/receipts`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${stack.apiUrl}/v1/platform/receipts`, deliveredAfterMs: 100, readAfterMs: 400, readShare: 0.5, twice: true, seed: 3 }),
  });
  expect(put.status).toBe(200);

  const runIds: string[] = [];
  for (const [i, owner] of [
    [0, token],
    [1, token],
    [2, other.body.token],
  ] as const) {
    // each account its own key: the API tells an account's receipts by it
    const account = await createHttpAccount(stack, owner, {
      name: `A${i}`,
      externalId: `hooked-${i}`,
      maxSendPerMinute: 60000,
      credentials: { apiKey: `hooked-api-key-000${i}` },
    });
    expect(account.status).toBe(201);
    const campaign = await api(stack, 'POST', '/v1/campaigns', owner, {
      accountId: account.body.id,
      name: `C${i}`,
      timezone: 'UTC',
      schedule: { type: 'once', at: new Date().toISOString() },
      messages: [{ type: 'text', text: 'Hello' }],
      targets: chats(`c${i}`),
    });
    expect(campaign.status).toBe(201);
    runIds.push(
      await eventually(
        'the run to be created',
        async () => (await api(stack, 'GET', `/v1/runs?campaignId=${campaign.body.id}`, owner)).body.items[0]?.id as string | undefined,
      ),
    );
  }
  const ended = await runsToEnd(stack, token, runIds.slice(0, 2), 60_000, 250);
  expect(ended.map((r) => r.status)).toEqual(['success', 'success']);

  // the API's view once every receipt the sandbox posts (twice) is recorded (the sandbox posts
  // a receipt again while the API does not know its send yet)
  const readChats = (items: { chatId: string; status: string }[]) =>
    new Set(items.filter((r) => r.status === 'read' && !r.chatId.startsWith('c2-')).map((r) => r.chatId));
  const reads = await eventually(
    'every receipt posted twice and recorded',
    async () => {
      const view = await sandbox<{ items: { chatId: string; status: string }[]; pending: boolean }>(stack, '/sandbox/receipts');
      // every receipt posted (a read follows its delivery by 300 ms), none still to go
      if (view.pending || view.items.filter((r) => r.status === 'delivered').length < 2 * 90) return null;
      const counts = await Promise.all(runIds.slice(0, 2).map(async (id) => (await api(stack, 'GET', `/v1/runs/${id}`, token)).body.counts));
      const want = readChats(view.items).size;
      return counts.every((c) => c.delivered === 30) && counts[0].read + counts[1].read === want ? want : null;
    },
    60_000,
    250,
  );
  expect(reads).toBeGreaterThan(10);
  const shown = new Map<string, StatusTarget>();
  for (const runId of runIds.slice(0, 2)) {
    const page = await api<{ items: StatusTarget[] }>(stack, 'GET', `/v1/runs/${runId}/targets?limit=100`, token);
    for (const t of page.body.items) shown.set(`${runId}/${t.chatId}`, { chatId: t.chatId, deliveredAt: t.deliveredAt, readAt: t.readAt });
  }
  expect([...shown.values()].filter((t) => t.readAt !== null)).toHaveLength(reads);

  // what the webhooks told, latest per chat, equals what the API shows
  const received = await eventually(
    'the webhooks to tell every receipt',
    async () => {
      const got = receiver.received.filter((r) => r.path.endsWith('t=receipts'));
      const told = merged(got);
      const complete = [...shown].every(([k, t]) => told.get(k)?.deliveredAt === t.deliveredAt && told.get(k)?.readAt === t.readAt);
      return complete ? got : null;
    },
    60_000,
    250,
  );
  const wh = new Webhook(hook.body.secret);
  const forged = new Webhook(otherHook.body.secret);
  for (const r of received) {
    const headers = { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature };
    expect(wh.verify(r.body, headers)).toEqual(r.payload);
    expect(() => forged.verify(r.body, headers)).toThrow();
    expect(() => wh.verify(r.body.replace('"delivered', '"Delivered'), headers)).toThrow();
  }
  for (const r of received) {
    expect(r.payload.type).toBe('message.status');
    // one run per delivery, and only its chats
    const runId: string = r.payload.data.runId;
    expect(runIds.slice(0, 2)).toContain(runId);
    const prefix = runId === runIds[0] ? 'c0-' : 'c1-';
    expect(r.payload.data.targets.every((t: StatusTarget) => t.chatId.startsWith(prefix))).toBe(true);
  }
  // batched: fewer deliveries than receipts recorded (each at least a delivery per chat)
  expect(received.length).toBeLessThan(60);
  expect(new Set(received.map((r) => r.id)).size).toBe(received.length);
  // the tenant subscribed to run.status hears its run, never a receipt
  await eventually('the other tenant told of its run', async () =>
    receiver.received.some((r) => r.path.endsWith('t=other') && r.payload.data.runId === runIds[2] && r.payload.data.status === 'success'),
  );
  expect(receiver.received.filter((r) => r.path.endsWith('t=other') && r.payload.type !== 'run.status')).toEqual([]);
}, 120_000);

/** Each chat's receipts as the deliveries that named it told them, in whatever order they came: the earliest of each time. */
function merged(received: Received[]): Map<string, StatusTarget> {
  const out = new Map<string, StatusTarget>();
  const min = (a: string | null, b: string | null) => (a === null ? b : b === null ? a : Date.parse(b) < Date.parse(a) ? b : a);
  for (const r of received)
    for (const t of r.payload.data.targets as StatusTarget[]) {
      const key = `${r.payload.data.runId}/${t.chatId}`;
      const was = out.get(key);
      out.set(key, { chatId: t.chatId, deliveredAt: min(was?.deliveredAt ?? null, t.deliveredAt), readAt: min(was?.readAt ?? null, t.readAt) });
    }
  return out;
}
