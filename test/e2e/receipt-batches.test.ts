import { api, createHttpAccount, createTenant, runsToEnd, sandbox, stackForFile } from '../helpers/stack.js';
import { allTargets, told, type ReceiptTarget } from '../helpers/receipts-told.js';
import { eventually } from '../helpers/test-env.js';
import type { PostedReceipt } from '../../services/sandbox/src/receipts.js';

// Receipts of several accounts in one POST (CONTRACT §5, the form with `accounts`): two tenants'
// http accounts send at once; the sandbox posts both accounts' receipts (twice, out of order)
// in shared POSTs, each group with its account's key. Every target ends as the sandbox told it.
// Then one batch holds a genuine receipt beside forged ones (another account's key, a key that
// is no account's, another account's message id): the genuine one is recorded, the forged ones
// change nothing.

const stack = stackForFile({ senders: 1 });

const CHATS = 40;
const chats = (prefix: string) => Array.from({ length: CHATS }, (_, i) => `${prefix}-${i + 1}`);
const KEYS = ['batch-api-key-000a', 'batch-api-key-000b'];

test("two accounts' receipts share POSTs and end as told; in a batch, forged receipts change nothing beside a genuine one", async () => {
  const owners = [(await createTenant(stack, 'Batch A')).body.token as string, (await createTenant(stack, 'Batch B')).body.token as string];
  const put = await fetch(`${stack.sandboxUrl}/sandbox/receipts`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      url: `${stack.apiUrl}/v1/platform/receipts`,
      deliveredAfterMs: 200,
      readAfterMs: 600,
      readShare: 0.5,
      twice: true,
      outOfOrder: true,
      // receipts due within 2 s go in the same POSTs: the two runs' sends may start a second apart on a loaded machine
      flushMs: 2000,
      accountsPerPost: 10,
      seed: 5,
    }),
  });
  expect(put.status).toBe(200);
  const at = new Date(Date.now() + 1500).toISOString();
  const runIds: string[] = [];
  const accountIds: string[] = [];
  for (const i of [0, 1]) {
    const account = await createHttpAccount(stack, owners[i]!, {
      name: `B${i}`,
      externalId: `batch-${i}`,
      maxSendPerMinute: 60000,
      groupConcurrency: 10,
      credentials: { apiKey: KEYS[i] },
    });
    expect(account.status).toBe(201);
    accountIds.push(account.body.id);
    const campaign = await api(stack, 'POST', '/v1/campaigns', owners[i]!, {
      accountId: account.body.id,
      name: `Batch ${i}`,
      timezone: 'UTC',
      schedule: { type: 'once', at },
      messages: [{ type: 'text', text: 'Hello' }],
      targets: chats(`b${i}`),
    });
    expect(campaign.status).toBe(201);
    runIds.push(
      await eventually(
        'the run to be created',
        async () => (await api(stack, 'GET', `/v1/runs?campaignId=${campaign.body.id}`, owners[i]!)).body.items[0]?.id as string | undefined,
      ),
    );
  }
  for (const i of [0, 1]) expect((await runsToEnd(stack, owners[i]!, [runIds[i]!], 60_000, 250))[0]!.status).toBe('success');

  // every receipt posted (twice) and recorded
  const posted = await eventually(
    'every receipt posted twice and recorded',
    async () => {
      const view = await sandbox<{ items: PostedReceipt[]; pending: boolean }>(stack, '/sandbox/receipts');
      if (view.pending || view.items.filter((r) => r.status === 'delivered').length < 2 * 2 * CHATS) return null;
      for (const i of [0, 1]) if ((await api(stack, 'GET', `/v1/runs/${runIds[i]}`, owners[i]!)).body.counts.delivered !== CHATS) return null;
      return view.items;
    },
    60_000,
    250,
  );
  // some POST carried both accounts' receipts
  const accountsByPost = new Map<number, Set<string>>();
  for (const p of posted) accountsByPost.set(p.post, (accountsByPost.get(p.post) ?? new Set()).add(p.account));
  expect([...accountsByPost.values()].some((a) => a.size === 2)).toBe(true);
  const before: ReceiptTarget[][] = [];
  for (const i of [0, 1]) {
    const want = told(posted, `batch-${i}`);
    const got = await allTargets(stack, owners[i]!, runIds[i]!);
    expect(got).toHaveLength(CHATS);
    expect(got.map((t) => ({ chatId: t.chatId, deliveredAt: t.deliveredAt, readAt: t.readAt }))).toEqual(
      got.map((t) => ({ chatId: t.chatId, deliveredAt: want.get(t.chatId)!.deliveredAt, readAt: want.get(t.chatId)!.readAt })),
    );
    before.push(got);
  }

  // One batch, no bearer: A's genuine read of an unread chat; B's key telling a read of another
  // of A's messages; a key that is no account's telling a third; A's key telling a read of B's.
  const unread = (i: number) => before[i]!.filter((t) => t.readAt === null).map((t) => t.chatId);
  const messageOf = (i: number, chatId: string) => posted.find((p) => p.account === `batch-${i}` && p.chatId === chatId)!.messageId;
  const [genuine, forgedByB, forgedUnknown] = unread(0);
  const [victimOfA] = unread(1);
  const readAt = new Date(Date.now() - 1000).toISOString();
  const longAgo = '2001-01-01T00:00:00.000Z';
  const receipt = (i: number, chatId: string, at: string) => ({ messageId: messageOf(i, chatId), chatId, status: 'read', at });
  const batch = {
    accounts: [
      { key: KEYS[0], receipts: [receipt(0, genuine!, readAt)] },
      { key: KEYS[1], receipts: [receipt(0, forgedByB!, longAgo)] },
      { key: 'no-such-api-key-0001', receipts: [receipt(0, forgedUnknown!, longAgo)] },
      { key: KEYS[0], receipts: [receipt(1, victimOfA!, longAgo)] },
    ],
  };
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${stack.apiUrl}/v1/platform/receipts`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const answer = await post(batch);
  expect(answer.status).toBe(200);
  expect(await answer.json()).toEqual({
    recorded: 1,
    ignored: 3,
    accounts: [
      { recorded: 1, ignored: 0, keyKnown: true, ignoredIndexes: [] },
      { recorded: 0, ignored: 1, keyKnown: true, ignoredIndexes: [0] },
      { recorded: 0, ignored: 1, keyKnown: false, ignoredIndexes: [0] },
      { recorded: 0, ignored: 1, keyKnown: true, ignoredIndexes: [0] },
    ],
  });
  // without a bearer only the form with accounts is heard; a bearer that is no account's key is refused whatever the form
  expect((await post({ receipts: batch.accounts[0]!.receipts })).status).toBe(401);
  expect((await post(batch, { authorization: 'Bearer no-such-api-key-0001' })).status).toBe(401);
  // a malformed group is a 400 naming it, and nothing of the batch is recorded
  const bad = await post({ accounts: [{ key: KEYS[0], receipts: [{ ...receipt(0, forgedByB!, longAgo), status: 'seen' }] }] });
  expect(bad.status).toBe(400);
  expect(JSON.stringify(await bad.json())).toMatch(/accounts\.0\.receipts\.0\.status/);

  const after = [await allTargets(stack, owners[0]!, runIds[0]!), await allTargets(stack, owners[1]!, runIds[1]!)];
  const changed = (i: number) => after[i]!.filter((t, k) => JSON.stringify(t) !== JSON.stringify(before[i]![k]));
  // A: only the genuine chat moved, read when told (delivered earlier already); B: nothing
  expect(changed(0).map((t) => [t.chatId, t.readAt])).toEqual([[genuine, readAt]]);
  expect(changed(1)).toEqual([]);
  expect((await api(stack, 'GET', `/v1/runs/${runIds[0]}`, owners[0]!)).body.counts.read).toBe(CHATS - unread(0).length + 1);
  expect((await api(stack, 'GET', `/v1/runs/${runIds[1]}`, owners[1]!)).body.counts.read).toBe(CHATS - unread(1).length);
}, 120_000);
