import { api, createHttpAccount, createTenant, sandbox, stackForFile, type SandboxMessage } from '../helpers/stack.js';
import { flushPrefix } from '../helpers/redis-flush.js';
import { eventually } from '../helpers/test-env.js';

// chatCap end to end: three campaigns of one account to the same chats, two senders and a Redis
// flush between them. Judged at the sandbox: no chat gets more than the cap from the account; the
// chats over it wait, with reason chat_cap in the API (the run's waiting and each target's).

const stack = stackForFile({ senders: 2 });
const CHATS = ['cap-0', 'cap-1', 'cap-2', 'cap-3', 'cap-4'];

const received = async (externalId: string) => (await sandbox<{ items: SandboxMessage[] }>(stack, `/sandbox/messages?account=${externalId}`)).items;
const perChat = (messages: SandboxMessage[]) => Object.fromEntries(CHATS.map((c) => [c, messages.filter((m) => m.chatId === c).length]));

test('two campaigns to the same chats: each chat gets at most chatCap at the platform, across a Redis flush; the rest wait with reason chat_cap', async () => {
  const tenant = (await createTenant(stack, 'chat-cap')).body;
  const account = await createHttpAccount(stack, tenant.token, {
    name: 'capped',
    externalId: 'capped',
    maxSendPerMinute: 600,
    chatCap: { count: 2, per: 'day' },
  });
  expect(account.status).toBe(201);
  expect(account.body.chatCap).toEqual({ count: 2, per: 'day' });
  const campaign = async (text: string) => {
    const res = await api(stack, 'POST', '/v1/campaigns', tenant.token, {
      accountId: account.body.id,
      name: text,
      timezone: 'UTC',
      schedule: { type: 'once', at: new Date().toISOString() },
      messages: [{ type: 'text', text }],
      targets: CHATS,
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const runOf = async (campaignId: string) => (await api(stack, 'GET', `/v1/runs?campaignId=${campaignId}`, tenant.token)).body.items[0];

  const first = await campaign('first');
  await eventually('the first campaign to reach every chat', async () => (await runOf(first))?.status === 'success', 60_000, 100);
  // Redis forgets what each chat got: the record in PostgreSQL still counts
  expect(await flushPrefix(stack.keyPrefix)).toBeGreaterThan(0);
  const second = await campaign('second');
  const third = await campaign('third');

  // two of the three reach every chat; the third finds each chat at its cap
  await eventually('10 messages at the platform', async () => (await received('capped')).length >= 10, 60_000, 100);
  const held = await eventually(
    'a run to wait for the cap',
    async () => {
      const runs = await Promise.all([second, third].map(runOf));
      return runs.find((r) => r?.waiting?.reason === 'chat_cap') ?? null;
    },
    30_000,
    250,
  );
  expect(held.waiting.until).not.toBeNull();
  expect(Date.parse(held.waiting.until)).toBeGreaterThan(Date.now() + 23 * 3_600_000);
  expect(held.waiting.detail).toContain('chatCap');
  const targets = (await api(stack, 'GET', `/v1/runs/${held.id}/targets`, tenant.token)).body.items as { status: string; waiting: { reason: string } | null }[];
  expect(targets).toHaveLength(CHATS.length);
  for (const target of targets.filter((x) => x.status === 'pending')) expect(target.waiting).toMatchObject({ reason: 'chat_cap' });
  expect(targets.filter((x) => x.status === 'pending').length).toBeGreaterThan(0);
  expect(targets.filter((x) => x.status === 'failed')).toEqual([]);

  // nothing more goes out meanwhile: every chat has exactly its cap
  await new Promise((r) => setTimeout(r, 3_000));
  const messages = await received('capped');
  expect(perChat(messages)).toEqual(Object.fromEntries(CHATS.map((c) => [c, 2])));
}, 180_000);
