import { api, createHttpAccount, createTenant, sandbox, stackForFile, type SandboxMessage } from '../helpers/stack.js';
import { flushPrefix } from '../helpers/redis-flush.js';
import { eventually } from '../helpers/test-env.js';

// Redis is disposable: every key of this deployment (queue, jobs, locks, pace, leader lease) is
// deleted while a run is half-way through. The reconciler re-enqueues the run from PostgreSQL,
// the run finishes, and the platform (the sandbox) never receives any part twice.

const stack = stackForFile({ senders: 2 });

test('Redis flushed mid-run: the run is re-enqueued and finishes; no chat receives a part twice', async () => {
  const tenant = (await createTenant(stack, 'flush')).body;
  const account = (await createHttpAccount(stack, tenant.token, { name: 'a', externalId: 'flush-a', maxSendPerMinute: 300 })).body;
  const targets = Array.from({ length: 30 }, (_, i) => `chat-${i}`);
  const created = await api(stack, 'POST', '/v1/campaigns', tenant.token, {
    accountId: account.id,
    name: 'two parts to 30 chats, 5 parts a second',
    timezone: 'UTC',
    schedule: { type: 'once', at: new Date().toISOString() },
    messages: [
      { type: 'text', text: 'one' },
      { type: 'text', text: 'two' },
    ],
    targets,
  });
  expect(created.status).toBe(201);

  const received = () => sandbox<{ items: SandboxMessage[] }>(stack, '/sandbox/messages?account=flush-a').then((r) => r.items);
  await eventually('the run to be half-way', async () => (await received()).length >= 20, 60_000, 100);
  const deleted = await flushPrefix(stack.keyPrefix);
  expect(deleted).toBeGreaterThan(0);
  const midway = (await received()).length;
  expect(midway).toBeLessThan(60);

  const run = await eventually(
    'the run to finish',
    async () => {
      const list = await api(stack, 'GET', `/v1/runs?campaignId=${created.body.id}`, tenant.token);
      const r = list.body.items[0];
      return r && !['queued', 'running'].includes(r.status) ? r : null;
    },
    90_000,
    250,
  );
  expect(run.status).toBe('success');
  expect(run.counts).toMatchObject({ total: 30, sent: 30, pending: 0, unknown: 0 });
  expect(Date.parse(run.startedAt)).toBeGreaterThanOrEqual(Date.parse(run.scheduledAt));

  const items = await received();
  expect(items).toHaveLength(60);
  for (const chat of targets) {
    expect(items.filter((m) => m.chatId === chat).map((m) => m.partIndex)).toEqual([0, 1]);
  }
  expect(new Set(items.map((m) => m.idempotencyKey)).size).toBe(60);
  expect((await sandbox<{ items: unknown[] }>(stack, '/sandbox/duplicates')).items).toEqual([]);
}, 150_000);
