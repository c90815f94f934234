import { api, createHttpAccount, createTenant, runsToEnd, sandbox, stackForFile } from '../helpers/stack.js';
import { allTargets, told, type ReceiptTarget } from '../helpers/receipts-told.js';
import { eventually } from '../helpers/test-env.js';
import type { PostedReceipt } from '../../services/sandbox/src/receipts.js';

// Receipts end to end (CONTRACT §3 "Receipts", §5): a run of 1,000 chats through the scheduler,
// a sender and the sandbox, which posts delivery and read receipts to the API late, out of
// order and twice. Every target ends with exactly the times the sandbox told, the counts add
// up, nothing is sent twice; a forged receipt changes nothing.

const stack = stackForFile({ senders: 1 });

const CHATS = Array.from({ length: 1000 }, (_, i) => `chat-${String(i + 1).padStart(4, '0')}`);

test('1,000 chats: receipts late, out of order and twice end as the sandbox told them; counts add up; nothing sent twice; forged receipts change nothing', async () => {
  const tenant = await createTenant(stack, 'Receipts');
  const token: string = tenant.body.token;
  const account = await createHttpAccount(stack, token, { name: 'R', externalId: 'receipts-a', maxSendPerMinute: 60000, groupConcurrency: 20 });
  expect(account.status).toBe(201);
  expect(account.body.receipts).toBe('supported');
  const put = await fetch(`${stack.sandboxUrl}/sandbox/receipts`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      url: `${stack.apiUrl}/v1/platform/receipts`,
      deliveredAfterMs: 200,
      readAfterMs: 700,
      readShare: 0.4,
      lateByMs: 300,
      twice: true,
      outOfOrder: true,
      batchSize: 200,
      seed: 7,
    }),
  });
  expect(put.status).toBe(200);

  const campaign = await api(stack, 'POST', '/v1/campaigns', token, {
    accountId: account.body.id,
    name: 'Reminder',
    timezone: 'UTC',
    schedule: { type: 'once', at: new Date().toISOString() },
    messages: [{ type: 'text', text: 'See you tomorrow' }],
    targets: CHATS,
  });
  expect(campaign.status).toBe(201);
  const runId = await eventually(
    'the run to be created',
    async () => (await api(stack, 'GET', `/v1/runs?campaignId=${campaign.body.id}`, token)).body.items[0]?.id as string | undefined,
  );
  const [ended] = await runsToEnd(stack, token, [runId], 120_000, 500);
  expect(ended!.status).toBe('success');

  // Every message delivered (twice over), 40 % read: wait until the sandbox has told them all
  // and the API shows every delivery.
  const posted = await eventually(
    'every receipt posted and recorded',
    async () => {
      const view = await sandbox<{ items: PostedReceipt[]; pending: boolean }>(stack, '/sandbox/receipts');
      // twice: every delivery posted two times, and no receipt still to go
      if (view.pending || view.items.filter((r) => r.status === 'delivered').length < 2 * CHATS.length) return null;
      const run = await api(stack, 'GET', `/v1/runs/${runId}`, token);
      return run.body.counts.delivered === CHATS.length ? view.items : null;
    },
    90_000,
    500,
  );
  const reads = new Set(posted.filter((r) => r.status === 'read').map((r) => r.chatId));
  expect(reads.size).toBeGreaterThan(200);
  expect(reads.size).toBeLessThan(600);
  // twice: every receipt was posted two times
  expect(posted.filter((r) => r.status === 'delivered')).toHaveLength(2 * CHATS.length);

  const want = told(posted, 'receipts-a');
  const targets = await allTargets(stack, token, runId);
  expect(targets).toHaveLength(CHATS.length);
  for (const t of targets) {
    const e = want.get(t.chatId)!;
    expect({ chatId: t.chatId, status: t.status, deliveredAt: t.deliveredAt, readAt: t.readAt, deliveredTo: t.deliveredTo }).toEqual({
      chatId: t.chatId,
      status: 'sent',
      deliveredAt: e.deliveredAt,
      readAt: e.readAt,
      deliveredTo: null,
    });
  }
  const run = await api(stack, 'GET', `/v1/runs/${runId}`, token);
  expect(run.body.counts).toMatchObject({ total: 1000, sent: 1000, delivered: 1000, read: reads.size, replied: 0 });

  // the filters agree with the counts
  const unread = await api(stack, 'GET', `/v1/runs/${runId}/targets?read=false&limit=500`, token);
  // a full page of the unread (never an empty list, where `every` holds of nothing)
  expect(unread.body.items).toHaveLength(Math.min(500, CHATS.length - reads.size));
  expect(unread.body.items.every((t: ReceiptTarget) => t.readAt === null)).toBe(true);
  const readOnes = await api(stack, 'GET', `/v1/runs/${runId}/targets?read=true&limit=500`, token);
  expect(readOnes.body.items.length).toBe(Math.min(500, reads.size));

  // nothing sent twice
  const messages = await sandbox<{ items: { chatId: string }[] }>(stack, '/sandbox/messages?account=receipts-a');
  expect(messages.items).toHaveLength(CHATS.length);
  expect(new Set(messages.items.map((m) => m.chatId)).size).toBe(CHATS.length);

  // Forged: another tenant's http account, with its own key, tells a read of this account's
  // message long ago; an unknown key is refused. Nothing moves.
  const other = await createTenant(stack, 'Forger');
  const forger = await api(stack, 'POST', '/v1/accounts', other.body.token, {
    platform: 'http',
    credentials: { apiKey: 'forger-api-key-0001' },
    name: 'F',
    externalId: 'receipts-f',
  });
  expect(forger.status).toBe(201);
  const unreadChat = CHATS.find((c) => !reads.has(c))!;
  const victim = posted.find((p) => p.chatId === unreadChat)!;
  const forged = { receipts: [{ messageId: victim.messageId, chatId: unreadChat, status: 'read', at: '2001-01-01T00:00:00Z' }] };
  const post = (key: string) =>
    fetch(`${stack.apiUrl}/v1/platform/receipts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(forged),
    });
  const byForger = await post('forger-api-key-0001');
  expect(byForger.status).toBe(200);
  expect(await byForger.json()).toEqual({ recorded: 0, ignored: 1 });
  expect((await post('no-such-api-key-0001')).status).toBe(401);
  const bad = await fetch(`${stack.apiUrl}/v1/platform/receipts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sandbox-api-key-0001' },
    body: JSON.stringify({ receipts: [{ messageId: victim.messageId, chatId: unreadChat, status: 'seen', at: 'yesterday' }] }),
  });
  expect(bad.status).toBe(400);
  // each bad field named, by its path
  const fields = ((await bad.json()) as { error: { details: { field: string }[] } }).error.details.map((d) => d.field);
  expect(fields.sort()).toEqual(['receipts.0.at', 'receipts.0.status']);
  const after = (await allTargets(stack, token, runId)).find((t) => t.chatId === unreadChat)!;
  expect(after.readAt).toBeNull();
  expect(after.deliveredAt).toBe(want.get(unreadChat)!.deliveredAt);
  expect((await api(stack, 'GET', `/v1/runs/${runId}`, token)).body.counts.read).toBe(reads.size);
  const metrics = await (await fetch(`${stack.apiUrl}/metrics`)).text();
  expect(metrics).toMatch(/metronome_receipts_total\{[^}]*status="unknown"[^}]*\} [1-9]/);
  expect(metrics).toMatch(/metronome_receipt_delay_seconds_count\{[^}]*status="delivered"[^}]*\} 1000/);
}, 240_000);
