import { gramjsClientFactory, type UserClient } from '@metronome/transports/telegram-user';
import type { OutgoingMessage, OutgoingPart } from '@metronome/transports';
import { StringSession } from 'telegram/sessions/index.js';
import { RecordingDirectorySink } from '../helpers/recording-directory-sink.js';
import { startTelegramUserWireKit, type TelegramUserWireKit } from '../helpers/telegram-user-wire-kit.js';
import type { DialogSpec } from '../helpers/wire-telegram.js';

// Through the REAL GramJS client on the FAKE Telegram's wire: the sign-in (code, two-step
// password by SRP, a QR code scanned by an account of another data centre), the answers that
// are the account's and not the chat's, refusals of one kind of part, blocked users, uploads
// whose flood waits reach Metronome and whose reference is reused across chats.

const DIALOGS: DialogSpec[] = [
  { kind: 'supergroup', id: '1900000001', title: 'Traders', members: 120 },
  { kind: 'supergroup', id: '1900000002', title: 'Quiet', members: 30 },
  { kind: 'group', id: '1900000003', title: 'Family', members: 5 },
  { kind: 'user', id: '1900000004', firstName: 'Ann', contact: true },
];
const TRADERS = '-1001900000001';
const QUIET = '-1001900000002';
const FAMILY = '-1900000003';
const ANN = '1900000004';
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(700_000, 7)]);
/** a photo of two upload parts (512 KiB each) */
const PHOTO = { mediaId: 'm-photo', sha256: 'x'.repeat(64), bytes: JPEG, contentType: 'image/jpeg', filename: 'p.jpg' };

let kit: TelegramUserWireKit;
const clients: UserClient[] = [];
beforeAll(async () => {
  kit = await startTelegramUserWireKit();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.disconnect()));
});
afterAll(async () => {
  await kit?.close();
});

let nextRun = 1;
const message = (chatId: string, part: OutgoingPart): OutgoingMessage => ({
  chatId,
  part,
  partIndex: 0,
  partCount: 1,
  idempotencyKey: `r${nextRun++}:${chatId}:0`,
});
const text = (chatId: string) => message(chatId, { type: 'text', text: `to ${chatId}` });
/** a client as the API's sign-in makes one for each step: from the session string so far */
const client = (session: string) => {
  const c = gramjsClientFactory(session, { apiId: 1, apiHash: 'wire', dc: kit.fake.dc() });
  clients.push(c);
  return c;
};

async function synced(o: Parameters<TelegramUserWireKit['account']>[0] = {}) {
  const a = await kit.account({ dialogs: DIALOGS, ...o });
  const r = kit.replica();
  await r.transport.syncDirectory(a.account, new RecordingDirectorySink());
  return { a, r };
}

test('sign-in with the code and the two-step password (SRP): a wrong password is refused, the right one signs in and the session sends', async () => {
  const phone = '+447811000001';
  const userId = kit.fake.addUser(phone, { password: 'correct horse' });
  const c = client('');
  await c.connect();
  const hash = await c.sendCode(phone);
  expect(await c.signIn(phone, hash, kit.fake.codeOf(phone)!)).toBe('password-needed');
  await expect(c.checkPassword('wrong')).rejects.toMatchObject({ errorMessage: 'PASSWORD_HASH_INVALID' });
  await c.checkPassword('correct horse');
  expect(await c.me()).toEqual({ id: userId, phone: phone.slice(1) });
  // the session string is all a sender gets: it signs in as that user
  const next = client(c.session());
  await next.connect();
  expect((await next.me()).id).toBe(userId);
});

test('a QR code scanned by an account of data centre 4: followed there, signed in, and the session names data centre 4', async () => {
  const phone = '+447811000002';
  const userId = kit.fake.addUser(phone, { dcId: 4 });
  const shows = client('');
  await shows.connect();
  const shown = await shows.qrLogin();
  if (shown.kind !== 'token') throw new Error(`expected a token, got ${shown.kind}`);
  const pending = shows.session();
  kit.fake.scanQr(shown.token, phone);
  // the API asks again on a new client of the pending session, as its poll does
  const polls = client(pending);
  await polls.connect();
  expect(await polls.qrLogin()).toEqual({ kind: 'signed-in' });
  const session = polls.session();
  expect(new StringSession(session).dcId).toBe(4);
  const after = client(session);
  await after.connect();
  expect((await after.me()).id).toBe(userId);
});

test.each([
  ['spam_limited', 'account_spam_limited'],
  ['frozen', 'account_frozen'],
  ['restricted', 'account_restricted'],
  ['duplicated', 'auth_key_duplicated'],
] as const)("an account Telegram has %s stops as the account's (%s), whatever the chat", async (state, code) => {
  const { a, r } = await synced();
  kit.fake.restrict(a.userId, state);
  expect(await r.transport.send(a.account, text(TRADERS))).toMatchObject({ kind: 'account-unavailable', code });
  expect(kit.fake.messagesOf(a.userId)).toEqual([]);
  await r.transport.close();
});

test('PEER_FLOOD: the account is restricted, not the chat', async () => {
  const { a, r } = await synced();
  kit.fake.peerFlood(a.userId);
  expect(await r.transport.send(a.account, text(ANN))).toMatchObject({ kind: 'account-unavailable', code: 'account_restricted' });
  await r.transport.close();
});

test('a group that refuses media takes the text; one that refuses text takes the media; a closed topic fails only its post', async () => {
  const { a, r } = await synced();
  kit.fake.refuseChat(a.userId, TRADERS, 'CHAT_SEND_MEDIA_FORBIDDEN', 403, { only: 'media' });
  kit.fake.refuseChat(a.userId, QUIET, 'CHAT_SEND_PLAIN_FORBIDDEN', 403, { only: 'text' });
  const prepared = await r.transport.prepareMedia(a.account, PHOTO);
  if (!prepared.ok) throw new Error(`upload failed: ${JSON.stringify(prepared.result)}`);
  const media = (chatId: string) => message(chatId, { type: 'media', mediaRef: prepared.ref, caption: 'c', contentType: 'image/jpeg', filename: 'p.jpg' });
  expect(await r.transport.send(a.account, media(TRADERS))).toMatchObject({ kind: 'rejected', code: 'chat_send_media_forbidden' });
  expect(await r.transport.send(a.account, text(TRADERS))).toMatchObject({ kind: 'delivered' });
  expect(await r.transport.send(a.account, text(QUIET))).toMatchObject({ kind: 'rejected', code: 'chat_send_plain_forbidden' });
  expect(await r.transport.send(a.account, media(QUIET))).toMatchObject({ kind: 'delivered' });
  kit.fake.refuseChat(a.userId, FAMILY, 'TOPIC_CLOSED', 400);
  expect(await r.transport.send(a.account, { ...text(FAMILY), threadId: 7 })).toMatchObject({ kind: 'rejected', code: 'topic_closed' });
  expect(kit.fake.messagesOf(a.userId).map((m) => [m.chatId, m.media ?? 'text'])).toEqual([
    [TRADERS, 'text'],
    [QUIET, 'photo'],
  ]);
  await r.transport.close();
});

test('a user who blocked the account, or whom it blocked: refused with the code that suppresses the chat', async () => {
  const { a, r } = await synced();
  kit.fake.block(a.userId, ANN, 'by_them');
  expect(await r.transport.send(a.account, text(ANN))).toMatchObject({ kind: 'rejected', code: 'user_is_blocked' });
  kit.fake.block(a.userId, ANN, 'by_me');
  expect(await r.transport.send(a.account, text(ANN))).toMatchObject({ kind: 'rejected', code: 'you_blocked_user' });
  await r.transport.close();
});

test("an upload's flood wait reaches the sender at once (GramJS's uploadFile would sleep it); the reference then goes to two chats, uploaded once", async () => {
  const { a, r } = await synced();
  kit.fake.floodUploads(a.userId, 30);
  const started = Date.now();
  const waited = await r.transport.prepareMedia(a.account, PHOTO);
  expect(waited).toMatchObject({ ok: false, result: { kind: 'account-wait', code: 'flood_wait', retryAfterMs: 30_000 } });
  expect(Date.now() - started).toBeLessThan(5_000);
  kit.fake.floodUploads(a.userId, 0);
  const prepared = await r.transport.prepareMedia(a.account, PHOTO);
  if (!prepared.ok) throw new Error('upload failed');
  for (const chatId of [TRADERS, FAMILY])
    expect(
      await r.transport.send(a.account, message(chatId, { type: 'media', mediaRef: prepared.ref, contentType: 'image/jpeg', filename: 'p.jpg' })),
    ).toMatchObject({ kind: 'delivered' });
  expect(kit.fake.uploads.filter((u) => u.userId === a.userId)).toHaveLength(1);
  expect(kit.fake.messagesOf(a.userId).map((m) => [m.chatId, m.media])).toEqual([
    [TRADERS, 'photo'],
    [FAMILY, 'photo'],
  ]);
  await r.transport.close();
});
