import { driveRun, startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';

// Media refs that expire (HTTP protocol): the platform forgets its refs, as a restarted one
// would, and answers `400 media_ref_invalid`. The sender forgets the ref, uploads once more and
// sends that part again, with no attempt counted; nothing fails.

let h: SenderHarness;
beforeEach(async () => {
  h = await startSenderHarness();
});
afterEach(async () => {
  await h.close();
});

interface Rejection {
  chatId: string;
  error: string;
}

test('a ref the platform no longer knows is uploaded again and the part sent again, no attempt counted', async () => {
  const { tenantId, accountId, externalId } = await h.seedAccount({ groupConcurrency: 1 });
  const mediaId = await h.seedMedia(tenantId, Buffer.from('pretend png bytes'));
  const parts = [{ type: 'media' as const, mediaId, caption: 'poster' }];
  const first = await h.seedRun({ tenantId, accountId, targets: ['a'], parts });
  await driveRun(h, first);
  expect((await h.run(first)).status).toBe('success');

  // the platform restarts and forgets every media ref
  const forgot = await fetch(`${h.sandboxUrl}/sandbox/media`, { method: 'DELETE' });
  expect(await forgot.json()).toEqual({ forgotten: 1 });

  const second = await h.seedRun({ tenantId, accountId, targets: ['b', 'c'], parts });
  await driveRun(h, second);
  expect((await h.run(second)).status).toBe('success');
  expect((await h.targets(second)).map((t) => [t.chat_id, t.status, t.attempts])).toEqual([
    ['b', 'sent', 1],
    ['c', 'sent', 1],
  ]);
  // one refusal, then one new upload shared by both chats
  const { items } = await h.sandboxGet<{ items: Rejection[] }>(`/sandbox/rejections?account=${externalId}`);
  expect(items.map((r) => [r.chatId, r.error])).toEqual([['b', 'media_ref_invalid']]);
  const stats = await h.sandboxGet<{ uploads: { account: string; count: number }[] }>('/sandbox/stats');
  expect(stats.uploads.filter((u) => u.account === externalId).reduce((n, u) => n + u.count, 0)).toBe(2);
  const { items: delivered } = await h.sandboxGet<{ items: { chatId: string; part: { mediaRef?: string } }[] }>(`/sandbox/messages?account=${externalId}`);
  expect(delivered.map((m) => m.chatId)).toEqual(['a', 'b', 'c']);
  expect(delivered[1]!.part.mediaRef).toBe(delivered[2]!.part.mediaRef);
  expect(delivered[1]!.part.mediaRef).not.toBe(delivered[0]!.part.mediaRef);
});
