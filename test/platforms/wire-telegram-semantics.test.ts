import { trustTelegramServerKey } from '@metronome/transports/telegram-user';
import { Api, errors, helpers, TelegramClient } from 'telegram';
import { Logger, LogLevel } from 'telegram/extensions/Logger.js';
import { computeCheck } from 'telegram/Password.js';
import { StringSession } from 'telegram/sessions/index.js';
import type { RpcContext } from '../helpers/wire-telegram-mtproto.js';
import { type DialogSpec, WireTelegram } from '../helpers/wire-telegram.js';

// The FAKE Telegram's semantics (test/helpers/wire-telegram.ts): its handler asked with GramJS `Api`
// requests, then the REAL GramJS client on the wire: sign-in by code, two-step password (computeCheck)
// and QR code across DCs (signInUserWithQrCode), typed dialogs, usernames, access hashes, a repeated
// random_id and a lost answer, the refusals of each kind and the account states.

const big = (x: bigint | number | string) => helpers.returnBigInt(x.toString());
let fake: WireTelegram;
const clients: TelegramClient[] = [];
let nextPhone = 447_700_100_000;
const phone = () => `+${nextPhone++}`;
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(60, 7)]);

beforeAll(async () => {
  fake = new WireTelegram();
  await fake.start();
  trustTelegramServerKey(fake.serverKeyPem);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
});
afterAll(async () => {
  await fake?.close();
});

// --- the handler, called directly ---

let nextKey = 1;
const ctx = (dcId = 2): RpcContext => ({ dcId, authKeyId: `test-key-${nextKey++}`, connectionId: 1 });

const call = (t: WireTelegram, c: RpcContext, request: object): Promise<any> => t.ask(c, request);

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    (a) => (a === 'hang' || a === 'drop' ? a : 'answered'),
    (e: { code: number; rpc?: string; errorMessage?: string }) => `${e.code} ${e.rpc ?? e.errorMessage}`,
  );
const sendCode = (t: WireTelegram, c: RpcContext, phoneNumber: string) =>
  call(t, c, new Api.auth.SendCode({ phoneNumber, apiId: 1, apiHash: 'h', settings: new Api.CodeSettings({}) })) as Promise<Api.auth.SentCode>;

const save = (c: RpcContext, fileId: number, bytes: Buffer, filePart = 0, total?: number) => {
  const part = { fileId: big(fileId), filePart, bytes };
  return call(fake, c, total ? new Api.upload.SaveBigFilePart({ ...part, fileTotalParts: total }) : new Api.upload.SaveFilePart(part));
};
const uploadPhoto = (c: RpcContext, fileId: number, parts = 1) => {
  const file = new Api.InputFile({ id: big(fileId), parts, name: `${fileId}.jpg`, md5Checksum: '' });
  return call(fake, c, new Api.messages.UploadMedia({ peer: new Api.InputPeerSelf(), media: new Api.InputMediaUploadedPhoto({ file }) }));
};

/** an account signed in on a key of its own (auth.sendCode, auth.signIn), with DIALOGS */
async function signedIn(t: WireTelegram = fake, opts: Parameters<WireTelegram['addUser']>[1] = {}) {
  const p = phone();
  const userId = t.addUser(p, opts);
  const c = ctx(opts.dcId);
  const sent = await sendCode(t, c, p);
  await call(t, c, new Api.auth.SignIn({ phoneNumber: p, phoneCodeHash: sent.phoneCodeHash, phoneCode: t.codeOf(p)! }));
  t.setDialogs(userId, DIALOGS);
  const hash = (chatId: string) => big(t.accessHashOf(userId, chatId));
  const send = (peer: Api.TypeInputPeer, message: string, randomId = helpers.generateRandomLong()) =>
    call(t, c, new Api.messages.SendMessage({ peer, message, randomId }));
  const peers = Object.fromEntries(
    DIALOGS.map((d) => [
      (d.kind === 'user' ? d.firstName : d.title).toLowerCase(),
      d.kind === 'user'
        ? new Api.InputPeerUser({ userId: big(d.id), accessHash: hash(d.id) })
        : d.kind === 'group'
          ? new Api.InputPeerChat({ chatId: big(d.id) })
          : new Api.InputPeerChannel({ channelId: big(d.id), accessHash: hash(`-100${d.id}`) }),
    ]),
  ) as Record<'traders' | 'news' | 'mine' | 'family' | 'friends' | 'ann' | 'bob', Api.TypeInputPeer>;
  return { phone: p, userId, ctx: c, hash, send, peers };
}

const DIALOGS: DialogSpec[] = [
  { kind: 'supergroup', id: '1700000001', title: 'Traders', members: 120, username: 'traders_club', forum: true },
  { kind: 'channel', id: '1700000002', title: 'News', members: 5000 },
  { kind: 'channel', id: '1700000003', title: 'Mine', members: 40, creator: true },
  { kind: 'group', id: '1700000004', title: 'Family', members: 5, sendBanned: true },
  { kind: 'group', id: '1700000005', title: 'Friends', members: 7, admin: true, sendBanned: true, mediaBanned: true },
  { kind: 'user', id: '1700000006', firstName: 'Ann', username: 'ann_example', contact: true },
  { kind: 'user', id: '1700000007', firstName: 'Bob' },
];

test('sign-in by code: each wrong step refused as Telegram refuses it; an unknown number must sign up; a request before it AUTH_KEY_UNREGISTERED', async () => {
  const p = phone();
  const userId = fake.addUser(p);
  const c = ctx();
  const signIn = (phoneCodeHash: string, phoneCode: string) => call(fake, c, new Api.auth.SignIn({ phoneNumber: p, phoneCodeHash, phoneCode }));
  const getMe = () => call(fake, c, new Api.users.GetUsers({ id: [new Api.InputUserSelf()] }));
  expect(await refusal(getMe())).toBe('401 AUTH_KEY_UNREGISTERED');
  expect(await refusal(sendCode(fake, c, '12ab'))).toBe('400 PHONE_NUMBER_INVALID');
  const [banned, far] = [phone(), phone()];
  fake.addUser(banned, { banned: true });
  fake.addUser(far, { dcId: 4 });
  expect(await refusal(sendCode(fake, c, banned))).toBe('400 PHONE_NUMBER_BANNED');
  expect(await refusal(sendCode(fake, c, far))).toBe('303 PHONE_MIGRATE_4');

  const first = await sendCode(fake, c, p);
  expect(first.type).toBeInstanceOf(Api.auth.SentCodeTypeApp);
  expect(await refusal(signIn('', fake.codeOf(p)!))).toBe('400 PHONE_CODE_HASH_EMPTY');
  expect(await refusal(signIn(first.phoneCodeHash, '00000'))).toBe('400 PHONE_CODE_INVALID');
  fake.expireCode(p);
  expect(fake.codeValid(p)).toBe(false);
  expect(await refusal(signIn(first.phoneCodeHash, fake.codeOf(p)!))).toBe('400 PHONE_CODE_EXPIRED');
  const second = await sendCode(fake, c, p);
  expect(await refusal(signIn(first.phoneCodeHash, fake.codeOf(p)!))).toBe('400 PHONE_CODE_EXPIRED'); // an older code's hash
  const auth = await signIn(second.phoneCodeHash, fake.codeOf(p)!);
  expect(auth).toBeInstanceOf(Api.auth.Authorization);
  expect(auth.user).toMatchObject({ self: true, phone: p.slice(1) });
  expect(auth.user.id.toString()).toBe(userId);
  expect((await getMe()).map((u: Api.User) => u.id.toString())).toEqual([userId]);

  const stranger = phone();
  const c2 = ctx();
  const sent = await sendCode(fake, c2, stranger);
  expect(sent.type).toBeInstanceOf(Api.auth.SentCodeTypeSms);
  const up = await call(fake, c2, new Api.auth.SignIn({ phoneNumber: stranger, phoneCodeHash: sent.phoneCodeHash, phoneCode: fake.codeOf(stranger)! }));
  expect(up).toBeInstanceOf(Api.auth.AuthorizationSignUpRequired);
});

test('QR login on the same DC: a token until scanned, then signed in (or the password asked); a token is accepted once', async () => {
  const [plain, guarded] = [phone(), phone()];
  const plainId = fake.addUser(plain);
  fake.addUser(guarded, { password: 'pw' });
  const exportToken = (c: RpcContext) => call(fake, c, new Api.auth.ExportLoginToken({ apiId: 1, apiHash: 'h', exceptIds: [] }));
  const c = ctx();
  const shown = await exportToken(c);
  expect(shown).toBeInstanceOf(Api.auth.LoginToken);
  expect(() => fake.scanQr(Buffer.from('not a token'), plain)).toThrow();
  fake.scanQr(Buffer.from(shown.token), plain);
  const done = await exportToken(c);
  expect(done).toBeInstanceOf(Api.auth.LoginTokenSuccess);
  expect(done.authorization.user.id.toString()).toBe(plainId);
  expect(await refusal(call(fake, ctx(), new Api.auth.ImportLoginToken({ token: shown.token })))).toBe('400 AUTH_TOKEN_ALREADY_ACCEPTED');

  const c2 = ctx();
  fake.scanQr(Buffer.from((await exportToken(c2)).token), guarded);
  expect(await refusal(exportToken(c2))).toBe('401 SESSION_PASSWORD_NEEDED');
  expect(await call(fake, c2, new Api.account.GetPassword())).toMatchObject({ hasPassword: true });
  expect(await refusal(call(fake, c2, new Api.updates.GetState()))).toBe('401 AUTH_KEY_UNREGISTERED'); // not signed in before the password
});

test('access hashes: a channel or user named with hash 0 or another account’s hash is refused; a basic group needs none; getUsers leaves such a user out', async () => {
  const a = await signedIn();
  const b = await signedIn();
  const mine = '-1001700000003';
  expect(a.hash(mine).toString()).not.toBe(b.hash(mine).toString());
  const channel = (accessHash: Api.long) => new Api.InputPeerChannel({ channelId: big('1700000003'), accessHash });
  expect(await refusal(a.send(channel(big(0)), 'hi'))).toBe('400 CHANNEL_INVALID');
  expect(await refusal(a.send(channel(b.hash(mine)), 'hi'))).toBe('400 CHANNEL_INVALID');
  expect(await refusal(a.send(a.peers.mine, 'hi'))).toBe('answered');
  const bob = (accessHash: Api.long) => new Api.InputPeerUser({ userId: big('1700000007'), accessHash });
  expect(await refusal(a.send(bob(big(0)), 'hi'))).toBe('400 PEER_ID_INVALID');
  expect(await refusal(a.send(a.peers.bob, 'hi'))).toBe('answered');
  expect(await refusal(a.send(a.peers.friends, 'hi'))).toBe('answered');
  expect(await refusal(a.send(new Api.InputPeerChat({ chatId: big('1799999999') }), 'hi'))).toBe('400 PEER_ID_INVALID');
  const getChannel = (accessHash: Api.long) =>
    call(fake, a.ctx, new Api.channels.GetChannels({ id: [new Api.InputChannel({ channelId: big('1700000003'), accessHash })] }));
  expect(await refusal(getChannel(big(0)))).toBe('400 CHANNEL_INVALID');
  expect((await getChannel(a.hash(mine))).chats[0]).toMatchObject({ title: 'Mine', creator: true, broadcast: true });
  const getBob = (accessHash: Api.long) => call(fake, a.ctx, new Api.users.GetUsers({ id: [new Api.InputUser({ userId: big('1700000007'), accessHash })] }));
  expect(await getBob(big(0))).toEqual([]);
  expect((await getBob(a.hash('1700000007')))[0]).toMatchObject({ firstName: 'Bob' });
  expect(fake.messagesOf(a.userId).map((m) => m.chatId)).toEqual([mine, '1700000007', '-1700000005']);
});

test('random_id: a repeat while the first is processed is refused RANDOM_ID_DUPLICATE (500); after, it is answered with the first message, nothing new taken', async () => {
  const slow = new WireTelegram(Date.now, 300);
  const a = await signedIn(slow);
  const randomId = helpers.generateRandomLong();
  const first = a.send(a.peers.traders, 'once', randomId);
  expect(await refusal(a.send(a.peers.traders, 'once', randomId))).toBe('500 RANDOM_ID_DUPLICATE');
  const id = (u: Api.Updates) => (u.updates[0] as Api.UpdateMessageID).id;
  const answered = await first;
  expect(answered.updates[1]).toBeInstanceOf(Api.UpdateNewChannelMessage);
  expect(id(await a.send(a.peers.traders, 'once', randomId))).toBe(id(answered));
  // the same random_id in another chat is another message
  expect(id(await a.send(a.peers.mine, 'once', randomId))).toBe(1);
  expect(slow.messagesOf(a.userId).map((m) => [m.chatId, m.randomId])).toEqual([
    ['-1001700000001', randomId.toString()],
    ['-1001700000003', randomId.toString()],
  ]);
  expect([slow.duplicatesRefused, slow.duplicatesAnswered]).toEqual([1, 1]);
});

test('refusals of the chat, per kind of message, and of the account', async () => {
  const a = await signedIn();
  expect(await refusal(a.send(a.peers.news, 'hi'))).toBe('403 CHAT_ADMIN_REQUIRED'); // a broadcast channel it does not admin
  expect(await refusal(a.send(a.peers.family, 'hi'))).toBe('403 CHAT_WRITE_FORBIDDEN'); // members may not send
  expect(await refusal(a.send(a.peers.friends, 'hi'))).toBe('answered'); // its admins may
  fake.refuseChat(a.userId, '-1001700000001', 'CHAT_SEND_MEDIA_FORBIDDEN', 403, { only: 'media' });
  fake.refuseChat(a.userId, '-1001700000003', 'CHAT_SEND_PLAIN_FORBIDDEN', 403, { only: 'text' });
  expect(await save(a.ctx, 1, JPEG)).toBe(true);
  const p = (await uploadPhoto(a.ctx, 1)).photo as Api.Photo;
  const media = (fileReference = Buffer.from(p.fileReference), accessHash = p.accessHash) =>
    new Api.InputMediaPhoto({ id: new Api.InputPhoto({ id: p.id, accessHash, fileReference }) });
  const sendMedia = (peer: Api.TypeInputPeer, m = media()) =>
    call(fake, a.ctx, new Api.messages.SendMedia({ peer, media: m, message: '', randomId: helpers.generateRandomLong() }));
  expect(await refusal(a.send(a.peers.traders, 'text goes'))).toBe('answered');
  expect(await refusal(sendMedia(a.peers.traders))).toBe('403 CHAT_SEND_MEDIA_FORBIDDEN');
  expect(await refusal(a.send(a.peers.mine, 'text refused'))).toBe('403 CHAT_SEND_PLAIN_FORBIDDEN');
  expect(await refusal(sendMedia(a.peers.mine))).toBe('answered');
  expect(await refusal(sendMedia(a.peers.mine, media(Buffer.from('stale'))))).toBe('400 FILE_REFERENCE_EXPIRED');
  expect(await refusal(sendMedia(a.peers.mine, media(undefined, big(5))))).toBe('400 MEDIA_EMPTY');
  expect(fake.uploads.filter((u) => u.userId === a.userId)).toEqual([
    { userId: a.userId, name: '1.jpg', size: JPEG.length, kind: 'photo', at: expect.any(Number) },
  ]);

  fake.block(a.userId, '1700000006', 'by_them');
  fake.block(a.userId, '1700000007', 'by_me');
  expect(await refusal(a.send(a.peers.ann, 'hi'))).toBe('400 USER_IS_BLOCKED');
  expect(await refusal(a.send(a.peers.bob, 'hi'))).toBe('400 YOU_BLOCKED_USER');
  fake.refuseChat(a.userId, '-1001700000001', 'TOPIC_CLOSED', 400);
  expect(await refusal(a.send(a.peers.traders, 'in a closed topic'))).toBe('400 TOPIC_CLOSED');
  fake.slowMode(a.userId, '-1001700000003', 30);
  expect(await refusal(a.send(a.peers.mine, 'hi'))).toBe('420 SLOWMODE_WAIT_30');
  fake.peerFlood(a.userId);
  expect(await refusal(a.send(a.peers.friends, 'hi'))).toBe('400 PEER_FLOOD');
  fake.flood(a.userId, 12);
  expect(await refusal(a.send(a.peers.friends, 'hi'))).toBe('420 FLOOD_WAIT_12');
  expect(fake.messagesOf(a.userId).map((m) => [m.chatId, m.media ?? m.text])).toEqual([
    ['-1700000005', 'hi'],
    ['-1001700000001', 'text goes'],
    ['-1001700000003', 'photo'],
  ]);
});

test("account states: spam-limited, frozen, restricted, duplicated, banned; a lost answer is taken, a hung send is not; typing and uploads' own refusals", async () => {
  const a = await signedIn();
  fake.restrict(a.userId, 'spam_limited');
  expect(await refusal(a.send(a.peers.friends, 'hi'))).toBe('400 USER_BANNED_IN_CHANNEL');
  expect(await refusal(a.send(a.peers.bob, 'hi'))).toBe('400 PEER_FLOOD'); // not a contact
  expect(await refusal(a.send(a.peers.ann, 'hi'))).toBe('answered'); // a contact
  fake.restrict(a.userId, 'frozen');
  expect(await refusal(a.send(a.peers.ann, 'hi'))).toBe('420 FROZEN_METHOD_INVALID');
  fake.restrict(a.userId, 'restricted');
  expect(await refusal(a.send(a.peers.ann, 'hi'))).toBe('403 USER_RESTRICTED');
  fake.restrict(a.userId, 'duplicated');
  expect(await refusal(call(fake, a.ctx, new Api.updates.GetState()))).toBe('406 AUTH_KEY_DUPLICATED');
  fake.restrict(a.userId, null);
  expect(await call(fake, a.ctx, new Api.updates.GetState())).toMatchObject({ pts: 2, qts: 0 });

  fake.loseAnswers(a.userId, 1);
  expect(await refusal(a.send(a.peers.ann, 'lost answer'))).toBe('drop');
  fake.hangSends(a.userId);
  expect(await refusal(a.send(a.peers.ann, 'never taken'))).toBe('hang');
  fake.hangSends(a.userId, false);
  expect(fake.messagesOf(a.userId).map((m) => m.text)).toEqual(['hi', 'lost answer']);
  expect(await call(fake, a.ctx, new Api.messages.SetTyping({ peer: a.peers.traders, topMsgId: 5, action: new Api.SendMessageTypingAction() }))).toBe(true);
  expect(fake.typing.filter((x) => x.userId === a.userId)).toEqual([
    {
      authKeyId: a.ctx.authKeyId,
      connectionId: 1,
      userId: a.userId,
      chatId: '-1001700000001',
      action: 'SendMessageTypingAction',
      topic: 5,
      at: expect.any(Number),
    },
  ]);

  await save(a.ctx, 7, Buffer.from('not an image'));
  expect(await refusal(uploadPhoto(a.ctx, 7))).toBe('400 IMAGE_PROCESS_FAILED');
  await save(a.ctx, 8, JPEG);
  expect(await refusal(uploadPhoto(a.ctx, 8, 2))).toBe('400 FILE_PART_1_MISSING');
  await save(a.ctx, 9, Buffer.alloc(1024), 0, 3);
  expect(await refusal(save(a.ctx, 9, Buffer.alloc(1024), 1, 4))).toBe('400 FILE_PARTS_INVALID'); // a big file's parts disagree on its count
  fake.floodUploads(a.userId, 8);
  expect(await refusal(save(a.ctx, 10, JPEG))).toBe('420 FLOOD_WAIT_8');

  const banned = phone();
  fake.addUser(banned, { banned: true });
  const key = fake.keyOf(await fake.signedInSession(banned));
  expect(await refusal(call(fake, { dcId: 2, authKeyId: key, connectionId: 1 }, new Api.updates.GetState()))).toBe('401 USER_DEACTIVATED_BAN');
  expect(fake.unanswered).toEqual([]);
});

// --- the real GramJS client on the wire ---

async function client(session = '', dcId = 2): Promise<TelegramClient> {
  const s = new StringSession(session);
  if (!session) s.setDC(dcId, fake.wire.ipOf(dcId), 80);
  const c = new TelegramClient(s, 1, 'hash', { connectionRetries: 1, floodSleepThreshold: 0, baseLogger: new Logger(LogLevel.NONE) });
  clients.push(c);
  await c.connect();
  return c;
}

test('GramJS signs in by code, then by code and two-step password (computeCheck: a wrong one refused PASSWORD_HASH_INVALID); getMe and the saved session name the account', async () => {
  const p = phone();
  const userId = fake.addUser(p);
  const c = await client();
  const { phoneCodeHash } = await c.sendCode({ apiId: 1, apiHash: 'hash' }, p);
  await c.invoke(new Api.auth.SignIn({ phoneNumber: p, phoneCodeHash, phoneCode: fake.codeOf(p)! }));
  expect(await c.getMe()).toMatchObject({ phone: p.slice(1), self: true });
  expect(fake.userOf((c.session as StringSession).save())).toBe(userId);

  const p2 = phone();
  const guardedId = fake.addUser(p2, { password: 'hunter2', hint: 'hunter' });
  const c2 = await client();
  const sent = await c2.sendCode({ apiId: 1, apiHash: 'hash' }, p2);
  const needed = await c2.invoke(new Api.auth.SignIn({ phoneNumber: p2, phoneCodeHash: sent.phoneCodeHash, phoneCode: fake.codeOf(p2)! })).catch((e) => e);
  expect(needed).toMatchObject({ code: 401, errorMessage: 'SESSION_PASSWORD_NEEDED' });
  const settings = await c2.invoke(new Api.account.GetPassword());
  expect(settings.hint).toBe('hunter');
  const wrong = await c2.invoke(new Api.auth.CheckPassword({ password: await computeCheck(settings, 'hunter3') })).catch((e) => e);
  expect(wrong).toMatchObject({ code: 400, errorMessage: 'PASSWORD_HASH_INVALID' });
  expect(fake.userOf((c2.session as StringSession).save())).toBeNull();
  const again = await c2.invoke(new Api.account.GetPassword());
  const auth = await c2.invoke(new Api.auth.CheckPassword({ password: await computeCheck(again, 'hunter2') }));
  expect((auth as Api.auth.Authorization).user.id.toString()).toBe(guardedId);
  expect(fake.userOf((c2.session as StringSession).save())).toBe(guardedId);
}, 30_000);

test("GramJS's signInUserWithQrCode for an account on DC 4: scanned, told by updateLoginToken, moved to DC 4 (LoginTokenMigrateTo), signed in there by importLoginToken", async () => {
  const p = phone();
  const userId = fake.addUser(p, { dcId: 4 });
  const c = await client();
  // GramJS's QR loop sleeps 30 s after showing a code, scanned or not: those timers must not hold the file open
  const setTimeoutOf = globalThis.setTimeout;
  globalThis.setTimeout = ((fn: () => void, ms?: number) => {
    const timer = setTimeoutOf(fn, ms);
    if ((ms ?? 0) >= 30_000) timer.unref();
    return timer;
  }) as typeof setTimeout;
  const user = await c
    .signInUserWithQrCode({ apiId: 1, apiHash: 'hash' }, { qrCode: async ({ token }) => fake.scanQr(token, p), onError: async () => true })
    .finally(() => (globalThis.setTimeout = setTimeoutOf));
  expect((user as Api.User).id.toString()).toBe(userId);
  expect(c.session.dcId).toBe(4);
  const saved = (c.session as StringSession).save();
  expect(fake.wire.dcOfKey(fake.keyOf(saved))).toBe(4);
  expect(fake.userOf(saved)).toBe(userId);
  const asked = fake.wire.requests.filter((r) => r.request.className.startsWith('auth.')).slice(-3);
  expect(asked.map((r) => `${r.ctx.dcId} ${r.request.className}`)).toEqual(['2 auth.ExportLoginToken', '2 auth.ExportLoginToken', '4 auth.ImportLoginToken']);
}, 30_000);

test('GramJS on a signed-in session: getDialogs typed (marked ids, kinds, counts, rights), a username resolved, a channel sent to with its hash and refused with 0, a repeat and a lost answer answered by the first message', async () => {
  const p = phone();
  const userId = fake.addUser(p);
  fake.setDialogs(userId, DIALOGS);
  const c = await client(await fake.signedInSession(p));
  const dialogs = await c.getDialogs({ limit: 50 });
  // id title isUser/isGroup/isChannel participantsCount creator-or-admin defaultBannedRights.sendMessages
  const shown = [...dialogs].map((d) => {
    const e = d.entity as { participantsCount?: number; creator?: boolean; adminRights?: unknown; defaultBannedRights?: { sendMessages?: boolean } };
    return `${d.id} ${d.title} ${+d.isUser}${+d.isGroup}${+d.isChannel} ${e.participantsCount ?? '-'} ${e.creator || e.adminRights ? 'admin' : '-'} ${e.defaultBannedRights?.sendMessages ?? '-'}`;
  });
  expect(shown).toEqual([
    '-1001700000001 Traders 011 120 - false',
    '-1001700000002 News 001 5000 - -',
    '-1001700000003 Mine 001 40 admin -',
    '-1700000004 Family 010 5 - true',
    '-1700000005 Friends 010 7 admin true',
    '1700000006 Ann 100 - - -',
    '1700000007 Bob 100 - - -',
  ]);
  const firstThree = await c.getDialogs({ limit: 3 }); // a messages.DialogsSlice counting all 7
  expect([firstThree.total, ...firstThree.map((d) => d.title)]).toEqual([7, 'Traders', 'News', 'Mine']);

  const fresh = await client(await fake.signedInSession(p));
  const traders = await fresh.getInputEntity('traders_club');
  expect(traders).toBeInstanceOf(Api.InputPeerChannel);
  expect((traders as Api.InputPeerChannel).accessHash.toString()).toBe(fake.accessHashOf(userId, '-1001700000001'));
  const unknown = await fresh.invoke(new Api.contacts.ResolveUsername({ username: 'nobody_here' })).catch((e) => e);
  expect(unknown).toMatchObject({ code: 400, errorMessage: 'USERNAME_NOT_OCCUPIED' });
  const text = (peer: Api.TypeInputPeer, message: string, randomId = helpers.generateRandomLong()) =>
    fresh.invoke(new Api.messages.SendMessage({ peer, message, randomId })) as Promise<Api.Updates>;
  const id = (u: Api.Updates) => (u.updates.find((x) => x instanceof Api.UpdateMessageID) as Api.UpdateMessageID).id;
  const hello = id(await text(traders, 'hello'));
  const zero = await text(new Api.InputPeerChannel({ channelId: big('1700000001'), accessHash: big(0) }), 'hello').catch((e) => e);
  expect(zero).toMatchObject({ code: 400, errorMessage: 'CHANNEL_INVALID' });

  const randomId = helpers.generateRandomLong();
  const answeredBefore = fake.duplicatesAnswered;
  const first = id(await text(traders, 'once', randomId));
  expect(id(await text(traders, 'once', randomId))).toBe(first);
  // the answer is lost with the connection: GramJS sends the request again on a new one, answered by the first message
  fake.loseAnswers(userId, 1);
  const lost = helpers.generateRandomLong();
  const resent = id(await text(traders, 'lost', lost));
  expect(fake.messagesOf(userId).map((m) => [m.text, m.id])).toEqual([
    ['hello', hello],
    ['once', first],
    ['lost', resent],
  ]);
  expect(fake.duplicatesAnswered - answeredBefore).toBe(2);
  const flood = await (fake.flood(userId, 40), text(traders, 'flooded')).catch((e) => e);
  expect(flood).toBeInstanceOf(errors.FloodWaitError);
  expect(flood.seconds).toBe(40);
}, 30_000);
