import { ManualClock } from '@metronome/core';
import { TelegramTransport, type TransportAccount } from '@metronome/transports';
import { FakeTelegramBotApi } from '../helpers/fake-telegram-bot-api.js';
import { RecordingDirectorySink } from '../helpers/recording-directory-sink.js';

// A bot's chat directory from its updates, over real HTTP against a FAKE Bot API that keeps
// updates and webhooks as Telegram documents them. The sink is a RECORDING sink (the calls the
// transport made), not the PostgreSQL directory.

const TOKEN = '7000000001:AAFakeTokenForTheDirectoryTests_000';
const BOT = '7000000001';
const clock = new ManualClock(Date.parse('2026-06-01T09:00:00Z'));
let fake: FakeTelegramBotApi;
let transport: TelegramTransport;
let sink: RecordingDirectorySink;
const account: TransportAccount = { id: 'acc-tg', externalId: null, credentials: { botToken: TOKEN } };

beforeEach(async () => {
  fake = await FakeTelegramBotApi.start(() => clock.now());
  fake.addBot(TOKEN);
  transport = new TelegramTransport({ baseUrl: fake.url, timeoutMs: 5_000, clock });
  sink = new RecordingDirectorySink();
});
afterEach(async () => {
  await transport.close();
  await fake.close();
});

const me = { id: 7000000001, is_bot: true, first_name: 'Metronome' };
const member = (chat: Record<string, unknown>, status: string, extra: Record<string, unknown> = {}) => ({
  chat,
  from: { id: 42, is_bot: false, first_name: 'Ana' },
  date: 1_780_000_000,
  old_chat_member: { status: 'left', user: me },
  new_chat_member: { status, user: me, ...extra },
});
const message = (chat: Record<string, unknown>, text: string) => ({ message_id: 1, date: 1_780_000_000, chat, text });

test("the chats of the bot's pending updates are upserted, and the updates are left for the bot's own reader", async () => {
  const parents = { id: -1001000000001, type: 'supergroup', title: 'Parents 3B' };
  const news = { id: -1001000000002, type: 'channel', title: 'School news' };
  const board = { id: -1001000000003, type: 'channel', title: 'Board' };
  const old = { id: -1001000000004, type: 'supergroup', title: 'Old group' };
  const ana = { id: 42, type: 'private', first_name: 'Ana', last_name: 'Silva' };
  const bob = { id: 43, type: 'private', first_name: 'Bob' };
  fake.updates.push(BOT, 'my_chat_member', member(parents, 'member'));
  fake.updates.push(BOT, 'message', message(parents, 'hello'));
  fake.updates.push(BOT, 'my_chat_member', member(news, 'administrator', { can_post_messages: true }));
  fake.updates.push(BOT, 'channel_post', message(news, 'post'));
  fake.updates.push(BOT, 'my_chat_member', member(board, 'member'));
  fake.updates.push(BOT, 'my_chat_member', member(old, 'member'));
  fake.updates.push(BOT, 'my_chat_member', member(old, 'kicked'));
  fake.updates.push(BOT, 'message', message(ana, '/start'));
  fake.updates.push(BOT, 'my_chat_member', member(bob, 'kicked'));
  fake.updates.push(BOT, 'callback_query', { id: 'q1', from: ana, data: 'x' });
  const pending = fake.updates.pending(BOT).length;

  await transport.syncDirectory(account, sink);

  const [upsert, ...more] = sink.of('upsert');
  expect(more).toHaveLength(0);
  expect(sink.of('replaceAll')).toHaveLength(0);
  const byId = new Map(upsert!.chats.map((c) => [c.chatId, c]));
  expect(byId.get('-1001000000001')).toEqual({
    chatId: '-1001000000001',
    title: 'Parents 3B',
    kind: 'group',
    memberCount: null,
    canSend: true,
    cannotSendReason: null,
  });
  expect(byId.get('-1001000000002')).toMatchObject({ title: 'School news', kind: 'channel', canSend: true });
  // Only administrators post in a channel.
  expect(byId.get('-1001000000003')).toMatchObject({ kind: 'channel', canSend: false, cannotSendReason: 'forbidden' });
  expect(byId.get('-1001000000004')).toMatchObject({ canSend: false, cannotSendReason: 'removed' });
  expect(byId.get('42')).toMatchObject({ title: 'Ana Silva', kind: 'direct', canSend: true });
  expect(byId.get('43')).toMatchObject({ title: 'Bob', kind: 'direct', canSend: false, cannotSendReason: 'blocked' });
  expect(upsert!.chats).toHaveLength(6);
  expect(sink.of('syncState').map((c) => c.state)).toEqual([
    { status: 'syncing', synced: 0 },
    { status: 'ok', size: 6 },
  ]);

  // Nothing confirmed and the bot's settings untouched: its own poller still gets every update, of every kind.
  expect(fake.updates.getUpdatesCalls).toHaveLength(1);
  expect(fake.updates.getUpdatesCalls[0]!.params).not.toHaveProperty('offset');
  expect(fake.updates.getUpdatesCalls[0]!.params).not.toHaveProperty('allowed_updates');
  expect(fake.updates.pending(BOT)).toHaveLength(pending);
  expect(fake.updates.allowedUpdates(BOT)).toBeNull();
});

test('a bot with its own webhook: the directory says so, and getUpdates is never called', async () => {
  fake.updates.setWebhook(BOT, 'https://bots.example.org/hook');
  fake.updates.push(BOT, 'message', message({ id: 42, type: 'private', first_name: 'Ana' }, 'hi'));
  await transport.syncDirectory(account, sink);
  expect(sink.of('syncState').map((c) => c.state)).toEqual([
    { status: 'unsupported', reason: 'the bot has its own webhook; Metronome does not read its updates' },
  ]);
  expect(fake.updates.getUpdatesCalls).toHaveLength(0);
  expect(sink.of('upsert')).toHaveLength(0);
});

test('no pending update: nothing upserted, the sync ok with none seen; a refused token fails the sync', async () => {
  await transport.syncDirectory(account, sink);
  expect(sink.of('upsert')).toHaveLength(0);
  expect(sink.state(account.id)).toEqual({ status: 'ok', size: 0 });
  fake.revoke(TOKEN);
  await transport.syncDirectory(account, sink);
  expect(sink.state(account.id)).toMatchObject({ status: 'failed', reason: expect.stringContaining('refused') });
});

test('updates too many for one answer are read fewer at a time, the earliest first', async () => {
  // Each a long message in its own chat: 100 of them are far over the 64 KiB an answer is read to.
  for (let i = 0; i < 100; i++) fake.updates.push(BOT, 'message', message({ id: 1000 + i, type: 'private', first_name: `User ${i}` }, 'x'.repeat(4000)));
  await transport.syncDirectory(account, sink);
  const limits = fake.updates.getUpdatesCalls.map((c) => c.params['limit']);
  expect(limits).toEqual([100, 50, 25, 12]);
  expect(sink.of('upsert')[0]!.chats.map((c) => c.chatId)).toEqual(Array.from({ length: 12 }, (_, i) => String(1000 + i)));
  expect(sink.state(account.id)).toEqual({ status: 'ok', size: 12 });
});
