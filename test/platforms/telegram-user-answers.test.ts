import { accountAdvice } from '@metronome/core';
import { AccountRepository, ChatDirectoryRepository, type MessagePart } from '@metronome/db';
import { driveRun } from '../helpers/sender-harness.js';
import { imageBytes } from '../helpers/fake-telegram-files.js';
import { dialogsOf, startTelegramUserHarness, type TelegramUserHarness } from './telegram-user-setup.js';

// Telegram's answers to a user account's sends, through the real sender job and the
// telegram_user transport, through the REAL GramJS client to the FAKE Telegram on the wire:
// refusals of a chat, PEER_FLOOD, a revoked session, a lost answer settled by the random_id,
// typing, and the dialogs as the chat directory.

const text = (t: string): MessagePart => ({ type: 'text', text: t });
let t: TelegramUserHarness;
beforeAll(async () => {
  // a send Telegram took but never answered is given up after 2 s (SEND_TIMEOUT_MS)
  t = await startTelegramUserHarness({ chatPacePerMinute: {} }, { timeoutMs: 2_000 });
});
afterAll(async () => {
  await t?.close();
});

const account = async (id: string) =>
  t.h.tdb.db.selectFrom('accounts').select(['status', 'cooling_reason', 'cooling_until']).where('id', '=', id).executeTakeFirstOrThrow();

test("each refusal of a chat fails it with Telegram's code, marks it in the directory and suppresses it; the other chats go", async () => {
  const { h, fake } = t;
  const codes = ['CHAT_WRITE_FORBIDDEN', 'USER_IS_BLOCKED', 'CHANNEL_PRIVATE', 'CHAT_ADMIN_REQUIRED', 'CHAT_RESTRICTED'];
  const chats = codes.map((_, i) => `-100${2_000_000 + i}`);
  const fine = '-1002000099';
  const a = await t.seedSignedIn({ dialogs: dialogsOf([...chats, fine]) });
  codes.forEach((code, i) => fake.refuseChat(a.userId, chats[i]!, code, code === 'CHANNEL_PRIVATE' ? 406 : 403));
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
  const a = await t.seedSignedIn({ groupConcurrency: 1, dialogs: dialogsOf(['1001', '1002']) });
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
  const a = await t.seedSignedIn({ dialogs: dialogsOf(['2001', '2002']) });
  fake.revoke(a.session);
  const runId = await h.seedRun({ tenantId: a.tenantId, accountId: a.accountId, targets: ['2001', '2002'], parts: [text('hi')] });
  await h.runJob(runId);
  expect((await account(a.accountId)).status).toBe('disconnected');
  const run = await h.run(runId);
  expect(run.status).toBe('paused');
  expect(run.error_summary).toContain('auth_key_unregistered');
  expect(run.error_summary).toContain(`/v1/accounts/${a.accountId}/telegram-sign-in`);
});

test('an answer lost after Telegram took the message: sent again with the same random_id, answered with the first message, settled as sent by the platform', async () => {
  const { h, fake } = t;
  const chats = ['3001', '3002', '3003'];
  const a = await t.seedSignedIn({ groupConcurrency: 1, dialogs: dialogsOf(chats) });
  // taken, then never answered on a connection that stays open: each send is given up after the timeout, in doubt
  fake.loseAnswers(a.userId, 2, 'hang');
  const answeredBefore = fake.duplicatesAnswered;
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
  // the two re-sends were answered with the first send's message: nothing posted twice
  expect(fake.duplicatesAnswered - answeredBefore).toBe(2);
  const settled = await h.metrics.registry.getSingleMetricAsString('metronome_unknown_settled_total');
  expect(settled).toMatch(/metronome_unknown_settled_total\{platform="telegram_user"[^}]*\} 2$/m);
});

test("the account's dialogs are its chat directory", async () => {
  const { h, fake } = t;
  const a = await t.seedSignedIn();
  fake.setDialogs(a.userId, [
    { kind: 'supergroup', id: '4000001', title: 'Traders', members: 120 },
    // a broadcast channel the account does not admin: it may not post there
    { kind: 'channel', id: '4000002', title: 'News', members: 5000 },
    { kind: 'user', id: '4000003', firstName: 'Ann' },
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
  const typed = await t.seedSignedIn({ groupConcurrency: 1, dialogs: dialogsOf(['5001']) });
  await h.tdb.db
    .updateTable('accounts')
    .set({ typing: JSON.stringify({ charsPerSecond: 10, maxSeconds: 2 }) })
    .where('id', '=', typed.accountId)
    .execute();
  const plain = await t.seedSignedIn({ groupConcurrency: 1, dialogs: dialogsOf(['5001']) });
  const run = async (a: { tenantId: string; accountId: string }) => {
    // a JPEG's head: Telegram makes a photo of an image only
    const mediaId = await h.seedMedia(a.tenantId, Buffer.concat([imageBytes('jpeg', 24), Buffer.from(`photo of ${a.accountId}`)]), 'image/jpeg');
    const runId = await h.seedRun({ tenantId: a.tenantId, accountId: a.accountId, targets: ['5001'], parts: [text('hello'), { type: 'media', mediaId }] });
    await driveRun(h, runId);
    expect((await h.run(runId)).status).toBe('success');
  };
  await run(typed);
  await run(plain);
  expect(fake.typing.filter((x) => x.authKeyId === fake.keyOf(typed.session)).map((x) => [x.chatId, x.action])).toEqual([
    ['5001', 'SendMessageTypingAction'],
    ['5001', 'SendMessageUploadPhotoAction'],
  ]);
  expect(fake.typing.filter((x) => x.authKeyId === fake.keyOf(plain.session))).toEqual([]);
});

test("one connection per account across senders: a second sender's transport is not ready while the first holds it", async () => {
  const { h } = t;
  const a = await t.seedSignedIn({ dialogs: dialogsOf(['6001']) });
  const runId = await h.seedRun({ tenantId: a.tenantId, accountId: a.accountId, targets: ['6001'], parts: [text('hi')] });
  await driveRun(h, runId);
  const other = await t.secondTransport();
  expect(await other.readiness!(a.accountId)).toMatchObject({ ready: false });
  expect(await h.deps.transports['telegram_user']!.readiness!(a.accountId)).toEqual({ ready: true });
  await other.close();
});
