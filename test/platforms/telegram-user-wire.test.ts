import { TelegramPeerRepository } from '@metronome/db';
import type { OutgoingMessage } from '@metronome/transports';
import { Api, helpers } from 'telegram';
import { RecordingDirectorySink } from '../helpers/recording-directory-sink.js';
import { startTelegramUserWireKit, type TelegramUserWireKit } from '../helpers/telegram-user-wire-kit.js';
import { eventually } from '../helpers/test-env.js';
import type { DialogSpec } from '../helpers/wire-telegram.js';

// The telegram_user transport through the REAL GramJS client (user-client.ts's gramjsClientFactory)
// against the FAKE Telegram on the wire (MTProto over TCP), its peers in PostgreSQL and its lease in
// Redis: chats that resolve after a restart, an unknown chat told at once, sends that never hang,
// one connection per account, a random_id repeat answered as Telegram answers it.

const DIALOGS: DialogSpec[] = [
  { kind: 'supergroup', id: '1800000001', title: 'Traders', members: 120 },
  { kind: 'channel', id: '1800000002', title: 'Mine', members: 40, creator: true },
  { kind: 'group', id: '1800000003', title: 'Family', members: 5 },
  { kind: 'user', id: '1800000004', firstName: 'Ann', username: 'ann_example', contact: true },
  { kind: 'user', id: '1800000005', firstName: 'Bob' },
];
const SUPERGROUP = '-1001800000001';
const CHANNEL = '-1001800000002';
const GROUP = '-1800000003';
const BOB = '1800000005';

const big = (x: string) => helpers.returnBigInt(x);
let kit: TelegramUserWireKit;
beforeAll(async () => {
  kit = await startTelegramUserWireKit();
});
afterAll(async () => {
  await kit?.close();
});

let nextRun = 1;
const text = (chatId: string, body: string, key = `run-${nextRun++}:${chatId}:0`): OutgoingMessage => ({
  chatId,
  part: { type: 'text', text: body },
  partIndex: 0,
  partCount: 1,
  idempotencyKey: key,
});
const requestsOf = (authKeyId: string, className: string) =>
  kit.fake.wire.requests.filter((r) => r.ctx.authKeyId === authKeyId && r.request.className === className).length;

test('after every sender restarts, a -100 chat, a channel, a user and a username all resolve from the peers kept in PostgreSQL; each gets its message once', async () => {
  const a = await kit.account({ dialogs: DIALOGS });
  // someone Telegram knows whom the account never met: found by username only
  await kit.account({ dialogs: [{ kind: 'user', id: '1800000010', firstName: 'Carol', username: 'carol_public' }] });
  const first = kit.replica();
  await first.transport.syncDirectory(a.account, new RecordingDirectorySink());
  await first.transport.close();

  // a new process: GramJS's own entity cache is empty, the session string keeps no peers
  const second = kit.replica();
  const sent = [];
  for (const chatId of [SUPERGROUP, CHANNEL, GROUP, BOB, '@ann_example', '@carol_public', '@Carol_Public'])
    sent.push(await second.transport.send(a.account, text(chatId, `hello ${chatId}`)));
  expect(sent.map((r) => r.kind)).toEqual(Array(7).fill('delivered'));
  expect(kit.fake.messagesOf(a.userId).map((m) => m.chatId)).toEqual([SUPERGROUP, CHANNEL, GROUP, BOB, '1800000004', '1800000010', '1800000010']);
  // a username learnt from the dialogs needs no resolving; another is resolved once, then found in PostgreSQL by any spelling
  expect(requestsOf(a.authKeyId, 'contacts.ResolveUsername')).toBe(1);
  await second.transport.close();
});

test('a chat no source knows fails at once as chat_not_found, saying what to do; nothing reaches Telegram', async () => {
  const a = await kit.account({ dialogs: DIALOGS });
  const r = kit.replica();
  // never synced: no access hash for the supergroup anywhere
  const result = await r.transport.send(a.account, text(SUPERGROUP, 'hi'));
  expect(result).toMatchObject({ kind: 'rejected', code: 'chat_not_found' });
  expect((result as { message: string }).message).toMatch(/sync its chat directory/);
  // an unknown username: Telegram's own refusal
  expect(await r.transport.send(a.account, text('@nobody_here', 'hi'))).toMatchObject({ kind: 'rejected', code: 'chat_not_found' });
  expect(kit.fake.messagesOf(a.userId)).toEqual([]);
  expect(requestsOf(a.authKeyId, 'messages.SendMessage')).toBe(0);
  await r.transport.close();
});

test('a send Telegram never answers is ambiguous after the timeout: the client is torn down and the lease let go; sent again, it is delivered once', async () => {
  const a = await kit.account({ dialogs: DIALOGS });
  const r = kit.replica({ timeoutMs: 1_500 });
  await r.transport.syncDirectory(a.account, new RecordingDirectorySink());
  kit.fake.hangSends(a.userId);
  const hung = text(GROUP, 'never answered');
  const started = Date.now();
  expect(await r.transport.send(a.account, hung)).toMatchObject({ kind: 'ambiguous', code: 'send_timeout' });
  expect(Date.now() - started).toBeLessThan(5_000);
  // torn down: no connection of the account's key stays open, and no replica holds its lease
  await eventually('its connections to close', async () => kit.fake.wire.openConnections(a.authKeyId) === 0, 5_000);
  expect(await kit.leases.peek(a.accountId, 'someone-else')).toBe('free');

  kit.fake.hangSends(a.userId, false);
  const other = kit.replica();
  expect(await other.transport.send(a.account, hung)).toMatchObject({ kind: 'delivered' });
  expect(kit.fake.messagesOf(a.userId).map((m) => m.text)).toEqual(['never answered']);
  await r.transport.close();
  await other.transport.close();
});

test('four first uses of an account at once share one connection', async () => {
  const a = await kit.account();
  const r = kit.replica();
  const clients = await Promise.all([1, 2, 3, 4].map(() => r.pool.client(a.accountId, a.account.credentials.session)));
  expect(new Set(clients).size).toBe(1);
  expect(kit.fake.wire.acceptedConnections(a.authKeyId)).toBe(1);
  await r.pool.close();
  await eventually('its connections to close', async () => kit.fake.wire.openConnections(a.authKeyId) === 0, 5_000);
});

test('a connection that opens and then never answers is given up after the connect timeout, its lease let go', async () => {
  const a = await kit.account();
  kit.fake.wire.stall(a.authKeyId);
  const r = kit.replica({ pool: { connectTimeoutMs: 1_000 } });
  const result = await r.transport.send(a.account, text(GROUP, 'hi'));
  expect(result).toMatchObject({ kind: 'retriable', code: 'not_connected' });
  expect(await kit.leases.peek(a.accountId, 'someone-else')).toBe('free');
  kit.fake.wire.stall(a.authKeyId, false);
  await r.transport.close();
});

test("a repeat of a delivered part's random_id is answered with the first message's id; nothing is posted twice", async () => {
  const a = await kit.account({ dialogs: DIALOGS });
  const r = kit.replica();
  await r.transport.syncDirectory(a.account, new RecordingDirectorySink());
  const once = text(BOB, 'only once');
  const first = await r.transport.send(a.account, once);
  const again = await r.transport.send(a.account, once);
  expect(first).toMatchObject({ kind: 'delivered' });
  expect(again).toEqual(first);
  expect((first as { messageId: string }).messageId).not.toBe('');
  expect(kit.fake.messagesOf(a.userId)).toHaveLength(1);
  expect(kit.fake.duplicatesAnswered).toBeGreaterThanOrEqual(1);
  await r.transport.close();
});

test('while Telegram still processes the first send, a repeat is retried later (never recorded as sent without an id)', async () => {
  const slow = await startTelegramUserWireKit(1_500);
  try {
    const a = await slow.account({ dialogs: DIALOGS });
    const r = slow.replica();
    await r.transport.syncDirectory(a.account, new RecordingDirectorySink());
    const once = text(BOB, 'processing');
    const firstSend = r.transport.send(a.account, once);
    await eventually('Telegram to take the first send', async () => slow.fake.messagesOf(a.userId).length === 1, 5_000);
    expect(await r.transport.send(a.account, once)).toMatchObject({ kind: 'retriable', code: 'random_id_in_processing' });
    const first = await firstSend;
    expect(first).toMatchObject({ kind: 'delivered' });
    expect(await r.transport.send(a.account, once)).toEqual(first);
    expect(slow.fake.messagesOf(a.userId)).toHaveLength(1);
    await r.transport.close();
  } finally {
    await slow.close();
  }
});

test('a person who writes to the account (an update naming them, with their access hash) can be written to after every sender restarts', async () => {
  // Dana is on Telegram, in nobody's dialogs of this account, known by no username
  await kit.account({ dialogs: [{ kind: 'user', id: '1800000020', firstName: 'Dana' }] });
  const a = await kit.account();
  const first = kit.replica();
  await first.pool.client(a.accountId, a.account.credentials.session);
  const date = Math.floor(Date.now() / 1000);
  const dana = new Api.User({ id: big('1800000020'), accessHash: big(kit.fake.accessHashOf(a.userId, '1800000020')), firstName: 'Dana' });
  const message = new Api.Message({ id: 1, peerId: new Api.PeerUser({ userId: big('1800000020') }), date, message: 'hello there' });
  kit.fake.wire.push(
    a.authKeyId,
    new Api.Updates({ updates: [new Api.UpdateNewMessage({ message, pts: 1, ptsCount: 1 })], users: [dana], chats: [], date, seq: 0 }),
  );
  await eventually('the peer to be kept', async () => (await new TelegramPeerRepository(kit.tdb.db).find(a.accountId, '1800000020')) !== null, 5_000);
  await first.transport.close();

  const second = kit.replica();
  expect(await second.transport.send(a.account, text('1800000020', 'hi Dana'))).toMatchObject({ kind: 'delivered' });
  expect(kit.fake.messagesOf(a.userId).map((m) => [m.chatId, m.text])).toEqual([['1800000020', 'hi Dana']]);
  await second.transport.close();
});

test("a replica that gives up a silent connection and connects again keeps the account's lease: the old connection's late release never frees it", async () => {
  const a = await kit.account({ dialogs: DIALOGS });
  const r = kit.replica({ timeoutMs: 1_000 });
  await r.transport.syncDirectory(a.account, new RecordingDirectorySink());
  kit.fake.loseAnswers(a.userId, 1, 'hang');
  const once = text(GROUP, 'taken, never answered');
  expect(await r.transport.send(a.account, once)).toMatchObject({ kind: 'ambiguous', code: 'send_timeout' });
  // settled on a new connection of the same replica: the repeat is answered with the first message
  expect(await r.transport.send(a.account, once)).toMatchObject({ kind: 'delivered' });
  const seen = new Set<string>();
  for (let i = 0; i < 15; i++) {
    seen.add(await kit.leases.peek(a.accountId, 'another-replica'));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  expect([...seen]).toEqual(['other']);
  expect(kit.fake.messagesOf(a.userId)).toHaveLength(1);
  await r.transport.close();
});
