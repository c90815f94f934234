import { compileText, renderText } from '@metronome/core';
import { api, sandbox, type SandboxMessage, stackForFile } from '../helpers/stack.js';
import { received } from '../helpers/platform-record.js';
import { eventually } from '../helpers/test-env.js';

// Personal messages end to end: each chat receives its own text as the sandbox records it, and
// a retry of a chat carries exactly the text its first attempt carried.

const SEND_TIMEOUT_MS = 1_000;
const stack = stackForFile({ senders: 1, senderEnv: { SEND_TIMEOUT_MS: String(SEND_TIMEOUT_MS) }, prism: true });

async function sandboxCall(method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${stack.sandboxUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`sandbox ${method} ${path} → ${res.status} ${await res.text()}`);
}

const TEXT = '{Hi|Hello|Hey} {{name}}, {see you|bye for now} in {{city}}';
const ACCOUNT = 'personal-acc';
const HANGING = 'chat-hang';

async function runEnded(token: string, runId: string, status: string) {
  return eventually(
    `run ${status}`,
    async () => {
      const run = await api(stack, 'GET', `/v1/runs/${runId}`, token);
      return run.body.status === status ? run.body : null;
    },
    60_000,
    250,
  );
}

test('each chat gets its own name and a variation picked for it; a retry after an unknown send carries the same text', async () => {
  const tenant = (await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name: 'personal' })).body;
  const account = await api(stack, 'POST', '/v1/accounts', tenant.token, {
    platform: 'http',
    credentials: { apiKey: 'sandbox-api-key-0001' },
    name: 'personal',
    externalId: ACCOUNT,
    maxSendPerMinute: 6000,
  });
  expect(account.status).toBe(201);
  // One chat's answer comes too late: its send is `unknown`, and the platform has its text.
  await sandboxCall('PUT', `/sandbox/chats/${ACCOUNT}/${HANGING}`, { hangNextMs: SEND_TIMEOUT_MS * 3 });

  const people = Array.from({ length: 30 }, (_, i) => ({ chatId: `chat-${i}`, vars: { name: `Name${i}`, city: i % 2 ? 'Oslo' : 'Lima' } }));
  const targets = [...people, { chatId: HANGING, vars: { name: 'Hana', city: 'Kyoto' } }];
  const campaign = await api(stack, 'POST', '/v1/campaigns', tenant.token, {
    accountId: account.body.id,
    name: 'personal',
    timezone: 'UTC',
    schedule: { type: 'once', at: new Date().toISOString() },
    messages: [{ type: 'text', text: TEXT }],
    targets,
  });
  expect(campaign.status).toBe(201);

  const runId = await eventually(
    'the run',
    async () => (await api(stack, 'GET', `/v1/runs?campaignId=${campaign.body.id}`, tenant.token)).body.items[0]?.id as string | undefined,
  );
  const first = await runEnded(tenant.token, runId, 'partial');
  expect(first.counts).toMatchObject({ sent: 30, unknown: 1 });

  // Each chat's text is its own, and exactly the rendering for (this run, this chat).
  const template = compileText(TEXT);
  if (!template.ok || template.template === null) throw new Error('the test text is a template');
  const expected = (t: (typeof targets)[number]) => renderText(template.template!, { runId, chatId: t.chatId, partIndex: 0 }, t.vars);
  const before = await received(stack);
  const textOf = (items: SandboxMessage[], chatId: string) => items.filter((m) => m.chatId === chatId).map((m) => m.part.text);
  for (const t of targets) {
    const texts = textOf(before, t.chatId);
    expect(texts).toEqual([expected(t)]);
    expect(texts[0]).toContain(`${t.vars.name}, `);
    expect(texts[0]).toMatch(new RegExp(`in ${t.vars.city}$`));
  }
  // the variations really vary between chats
  expect(new Set(people.map((p) => textOf(before, p.chatId)[0]!.split(' ')[0])).size).toBeGreaterThan(1);
  const firstText = textOf(before, HANGING)[0];

  // The platform forgets every idempotency key (a re-send is recorded again instead of being
  // dropped as a repeat), then the unknown chat is retried.
  await eventually(
    'the hanging answer written',
    async () => (await sandbox<{ items: SandboxMessage[] }>(stack, `/sandbox/messages?account=${ACCOUNT}&chat=${HANGING}`)).items[0]?.answeredAt != null,
  );
  await sandboxCall('POST', '/sandbox/reset');
  const retry = await api(stack, 'POST', `/v1/runs/${runId}/retry-failed`, tenant.token);
  expect(retry.status).toBe(202);
  await runEnded(tenant.token, runId, 'success');

  const after = await received(stack);
  expect(after.map((m) => m.chatId)).toEqual([HANGING]);
  expect(textOf(after, HANGING)).toEqual([firstText]);
}, 120_000);
