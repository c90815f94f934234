// The real sender job (SenderHarness: PostgreSQL, Redis, manual clock) through the HTTP transport
// to the sandbox (the fake platform): chat ids in any script are delivered and marked sent.
import { decodeIdempotencyKey } from '@metronome/transports';
import { driveRun, startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';

let h: SenderHarness;
beforeAll(async () => {
  h = await startSenderHarness();
});
afterAll(async () => {
  await h?.close();
});

test('a run to Cyrillic, emoji, CJK and spaced chat ids ends success, each chat receiving its parts once', async () => {
  const account = await h.seedAccount({ groupConcurrency: 3 });
  const chats = ['Привет-чат', '🎉 вечеринка 🎊', '群组一号', 'a b', '100%', 'ж'.repeat(256)];
  const runId = await h.seedRun({
    tenantId: account.tenantId,
    accountId: account.accountId,
    targets: chats,
    parts: [
      { type: 'text', text: 'one' },
      { type: 'text', text: 'two' },
    ],
  });
  await driveRun(h, runId);
  expect((await h.run(runId)).status).toBe('success');
  for (const t of await h.targets(runId)) expect(t).toMatchObject({ status: 'sent', parts_sent: 2, error_code: null });

  const { items } = await h.sandboxGet<{ items: { chatId: string; idempotencyKey: string; partIndex: number }[] }>(
    `/sandbox/messages?account=${encodeURIComponent(account.externalId)}`,
  );
  expect(items.map((m) => m.chatId).sort()).toEqual(chats.flatMap((c) => [c, c]).sort());
  for (const m of items) expect(decodeIdempotencyKey(m.idempotencyKey)).toBe(`${runId}:${m.chatId}:${m.partIndex}`);
  expect((await h.sandboxGet<{ duplicateKeys: number }>('/sandbox/stats')).duplicateKeys).toBe(0);
});
