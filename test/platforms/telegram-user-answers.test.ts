import { accountAdvice } from '@metronome/core';
import { AccountRepository, ChatDirectoryRepository, type MessagePart } from '@metronome/db';
import { driveRun } from '../helpers/sender-harness.js';
import { startTelegramUserHarness, type TelegramUserHarness } from './telegram-user-setup.js';

// Telegram's answers to a user account's sends, through the real sender job and the
// telegram_user transport, to a FAKE Telegram through the FAKE GramJS client (GramJS's own
// RPCError classes): refusals of a chat, PEER_FLOOD, a revoked session, a lost answer settled by
// the random_id, typing, and the dialogs as the chat directory.

const text = (t: string): MessagePart => ({ type: 'text', text: t });
let t: TelegramUserHarness;
beforeAll(async () => {
  t = await startTelegramUserHarness({ chatPacePerMinute: {} });
});
afterAll(async () => {
  await t?.close();
});

const account = async (id: string) =>
  t.h.tdb.db.selectFrom('accounts').select(['status', 'cooling_reason', 'cooling_until']).where('id', '=', id).executeTakeFirstOrThrow();

test("each refusal of a chat fails it with Telegram's code, marks it in the directory and suppresses it; the other chats go", async () => {
  const { h, fake } = t;
  const a = await t.seedSignedIn();
  const codes = ['CHAT_WRITE_FORBIDDEN', 'USER_IS_BLOCKED', 'CHANNEL_PRIVATE', 'CHAT_ADMIN_REQUIRED', 'CHAT_RESTRICTED'];
  const chats = codes.map((_, i) => `-100${2_000_000 + i}`);
  codes.forEach((code, i) => fake.refuseChat(a.userId, chats[i]!, code, code === 'CHANNEL_PRIVATE' ? 406 : 403));
  const fine = '-1002000099';
  await new ChatDirectoryRepository(h.tdb.db).replaceAll(
    a.accountId,
    [...chats, fine].map((chatId) => ({ chatId, title: chatId, kind: 'group' as const, memberCount: null, canSend: true, cannotSendReason: null })),
    new Date(h.clock.now()),
  );
  const runId = await h.seedRun({ tenantId: a.tenantId, accountId: a.accountId, targets: [...chats, fine], parts: [text('hi')] });
  await driveRun(h, runId);
  const targets = Object.fromEntries((await h.targets(runId)).map((x) => [x.chat_id, x]));
  codes.forEach((code, i) => expect(targets[chats[i]!]).toMatchObject({ status: 'failed', error_code: code.toLowerCase() }));
  expect(targets[fine]).toMatchObject({ status: 'sent' });
  const suppressed = (await new AccountRepository(h.tdb.db).suppressions(a.accountId, { limit: 100 })).map((s) => s.chatId);
  expect(suppressed.sort()).toEqual([...chats].sort());
  const directory = await h.tdb.db
    .selectFrom('chat_directory')
    .select(['chat_id', 'can_send', 'cannot_send_reason'])
    .where('account_id', '=', a.accountId)
    .execute();
  const marks = Object.fromEntries(directory.map((d) => [d.chat_id, d.cannot_send_reason]));
  expect(marks).toEqual({
    [chats[0]!]: 'forbidden',
    [chats[1]!]: 'blocked',
    [chats[2]!]: 'not_found',
    [chats[3]!]: 'forbidden',
    [chats[4]!]: 'forbidden',
    [fine]: null,
  });
  expect(fake.messagesOf(a.userId).map((m) => m.chatId)).toEqual([fine]);
});

test('PEER_FLOOD: the account stops, restricted until lifted (spam-limited, with what to do)', async () => {
  const { h, fake } = t;
  const a = await t.seedSignedIn({ groupConcurrency: 1 });
  fake.peerFlood(a.userId);
  const runId = await h.seedRun({ tenantId: a.tenantId, accountId: a.accountId, targets: ['1001', '1002'], parts: [text('hi')] });
  await h.runJob(runId);
  expect(await account(a.accountId)).toEqual({ status: 'cooling', cooling_reason: 'restricted', cooling_until: null });
  expect(fake.messagesOf(a.userId)).toEqual([]);
  const targets = await h.targets(runId);
  expect(targets.filter((x) => x.status === 'sent')).toEqual([]);
  // what the operator reads of the account (the run's wait and the account's advice)
  expect(accountAdvice('telegram_user', a.accountId, 'cooling', 'restricted')).toContain('@SpamBot');
});

test('a session revoked on the phone: the account is disconnected and its run paused, saying to sign in again', async () => {
  const { h, fake } = t;
  const a = await t.seedSignedIn();
  fake.revoke(a.session);
  const runId = await h.seedRun({ tenantId: a.tenantId, accountId: a.accountId, targets: ['2001', '2002'], parts: [text('hi')] });
  await h.runJob(runId);
  expect((await account(a.accountId)).status).toBe('disconnected');
  const run = await h.run(runId);
  expect(run.status).toBe('paused');
  expect(run.error_summary).toContain('auth_key_unregistered');
  expect(run.error_summary).toContain(`/v1/accounts/${a.accountId}/telegram-sign-in`);
});

test('an answer lost after Telegram took the message: sent again with the same random_id, refused as a duplicate, settled as sent by the platform', async () => {
  const { h, fake } = t;
  const a = await t.seedSignedIn({ groupConcurrency: 1 });
  fake.loseAnswers(a.userId, 2);
  const chats = ['3001', '3002', '3003'];
  const runId = await h.seedRun({ tenantId: a.tenantId, accountId: a.accountId, targets: chats, parts: [text('one'), text('two')] });
  await driveRun(h, runId);
  expect((await h.run(runId)).status).toBe('success');
  const targets = await h.tdb.db.selectFrom('run_targets').select(['chat_id', 'status', 'ambiguous_at']).where('run_id', '=', runId).execute();
  for (const x of targets) expect(x.status).toBe('sent');
  expect(targets.filter((x) => x.ambiguous_at !== null).length).toBeGreaterThan(0);
  // each (chat, part) once at Telegram
  const mine = fake.messagesOf(a.userId);
  expect(mine.map((m) => `${m.chatId}:${m.text}`).sort()).toEqual(chats.flatMap((c) => [`${c}:one`, `${c}:two`]).sort());
  expect(new Set(mine.map((m) => m.randomId)).size).toBe(mine.length);
  const settled = await h.metrics.registry.getSingleMetricAsString('metronome_unknown_settled_total');
  expect(settled).toMatch(/metronome_unknown_settled_total\{platform="telegram_user"[^}]*\} 2$/m);
});

test("the account's dialogs are its chat directory", async () => {
  const { h, fake } = t;
  const a = await t.seedSignedIn();
  fake.setDialogs(a.userId, [
    { chatId: '-1004000001', title: 'Traders', kind: 'group', canSend: true, memberCount: 120 },
    { chatId: '-1004000002', title: 'News', kind: 'channel', canSend: false, memberCount: 5000 },
    { chatId: '4000003', title: 'Ann', kind: 'user', canSend: true, memberCount: null },
  ]);
  const transport = h.deps.transports['telegram_user']!;
  await transport.syncDirectory!({ id: a.accountId, externalId: a.userId, credentials: { session: a.session } }, new ChatDirectoryRepository(h.tdb.db));
  const rows = await h.tdb.db
    .selectFrom('chat_directory')
    .select(['chat_id', 'kind', 'can_send', 'cannot_send_reason'])
    .where('account_id', '=', a.accountId)
    .orderBy('chat_id')
    .execute();
  expect(rows).toEqual([
    { chat_id: '-1004000001', kind: 'group', can_send: true, cannot_send_reason: null },
    { chat_id: '-1004000002', kind: 'channel', can_send: false, cannot_send_reason: 'announce_only' },
    { chat_id: '4000003', kind: 'direct', can_send: true, cannot_send_reason: null },
  ]);
});

test('typing when the account asks for it: setTyping before a text, uploading a photo before a photo; none without', async () => {
  const { h, fake } = t;
  const typed = await t.seedSignedIn({ groupConcurrency: 1 });
  await h.tdb.db
    .updateTable('accounts')
    .set({ typing: JSON.stringify({ charsPerSecond: 10, maxSeconds: 2 }) })
    .where('id', '=', typed.accountId)
    .execute();
  const plain = await t.seedSignedIn({ groupConcurrency: 1 });
  const run = async (a: { tenantId: string; accountId: string }) => {
    const mediaId = await h.seedMedia(a.tenantId, Buffer.from(`photo of ${a.accountId}`), 'image/jpeg');
    const runId = await h.seedRun({ tenantId: a.tenantId, accountId: a.accountId, targets: ['5001'], parts: [text('hello'), { type: 'media', mediaId }] });
    await driveRun(h, runId);
    expect((await h.run(runId)).status).toBe('success');
  };
  await run(typed);
  await run(plain);
  expect(fake.typing.filter((x) => x.session === typed.session).map((x) => [x.chatId, x.action])).toEqual([
    ['5001', 'SendMessageTypingAction'],
    ['5001', 'SendMessageUploadPhotoAction'],
  ]);
  expect(fake.typing.filter((x) => x.session === plain.session)).toEqual([]);
});

test("one connection per account across senders: a second sender's transport is not ready while the first holds it", async () => {
  const { h } = t;
  const a = await t.seedSignedIn();
  const runId = await h.seedRun({ tenantId: a.tenantId, accountId: a.accountId, targets: ['6001'], parts: [text('hi')] });
  await driveRun(h, runId);
  const other = await t.secondTransport();
  expect(await other.readiness!(a.accountId)).toMatchObject({ ready: false });
  expect(await h.deps.transports['telegram_user']!.readiness!(a.accountId)).toEqual({ ready: true });
  await other.close();
});
