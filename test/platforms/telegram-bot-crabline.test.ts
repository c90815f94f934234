import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTelegramServer, type StartedTelegramServer } from '@openclaw/crabline';
import type { MessagePart } from '@metronome/db';
import { TelegramTransport } from '@metronome/transports';
import { imageBytes } from '../helpers/fake-telegram-files.js';
import { driveRun, startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';

// The bot path against a Bot API server written by others: @openclaw/crabline's
// startTelegramServer (MIT), a FAKE of Telegram's Bot API that checks the methods' fields and
// Telegram's length limits, reached through TELEGRAM_API_URL as a self-hosted server would be.
// The real sender job and the real telegram transport send to it (real PostgreSQL and Redis,
// manual clock); what was posted is judged from crabline's own record of the requests it
// received (its JSONL recorder), not from our tables.

let crabline: StartedTelegramServer;
let recordDir: string;
let h: SenderHarness;
let bot: { tenantId: string; accountId: string };

/** One request crabline recorded: the method, the fields it read (a file as its name), whether it took it. */
interface Recorded {
  path: string;
  body: Record<string, unknown>;
  accepted?: boolean;
}

async function record(): Promise<Recorded[]> {
  const text = await readFile(crabline.manifest.recorderPath, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Recorded);
}

/** The send requests crabline recorded for `chatId` (any send method, taken or not). */
async function sendsTo(chatId: string): Promise<Recorded[]> {
  return (await record()).filter((e) => /\/send(Message|Photo|Video|Document|Animation|Audio)$/.test(e.path) && String(e.body['chat_id']) === chatId);
}

async function sendRun(chatId: string, parts: MessagePart[]): Promise<{ status: string; error_code: string | null }> {
  const runId = await h.seedRun({ tenantId: bot.tenantId, accountId: bot.accountId, targets: [chatId], parts });
  await driveRun(h, runId);
  const [target] = await h.targets(runId);
  return { status: target!.status, error_code: target!.error_code };
}

beforeAll(async () => {
  recordDir = await mkdtemp(path.join(tmpdir(), 'crabline-telegram-'));
  crabline = await startTelegramServer({ recorderPath: path.join(recordDir, 'telegram.jsonl') });
  h = await startSenderHarness({}, undefined, {
    transports: () => ({ telegram: new TelegramTransport({ baseUrl: crabline.manifest.endpoints.apiRoot, timeoutMs: 15_000 }) }),
  });
  const botId = crabline.manifest.botToken.split(':')[0]!;
  bot = await h.seedAccount({ platform: 'telegram', externalId: botId, credentials: { botToken: crabline.manifest.botToken } });
}, 30_000);

afterAll(async () => {
  await h?.close();
  await crabline?.close();
  if (recordDir) await rm(recordDir, { recursive: true, force: true });
});

test('a text reaches the chat once, as written', async () => {
  const chat = '-1002000001';
  expect(await sendRun(chat, [{ type: 'text', text: 'Morning reminder ✅' }])).toEqual({ status: 'sent', error_code: null });
  const sends = await sendsTo(chat);
  expect(sends.map((s) => [s.path.split('/').pop(), s.body['text'], s.accepted])).toEqual([['sendMessage', 'Morning reminder ✅', true]]);
});

test('a photo is uploaded once by sendPhoto, with its caption, and sent to the next chat by the file_id crabline gave', async () => {
  const chats = ['-1002000002', '-1002000012'];
  const mediaId = await h.seedMedia(bot.tenantId, imageBytes('png', 64 * 1024), 'image/png');
  const runId = await h.seedRun({ tenantId: bot.tenantId, accountId: bot.accountId, targets: chats, parts: [{ type: 'media', mediaId, caption: 'the menu' }] });
  await driveRun(h, runId);
  expect((await h.targets(runId)).map((t) => t.status)).toEqual(['sent', 'sent']);
  const sends = [...(await sendsTo(chats[0]!)), ...(await sendsTo(chats[1]!))];
  expect(sends).toHaveLength(2);
  for (const s of sends) expect(s).toMatchObject({ path: expect.stringMatching(/\/sendPhoto$/), accepted: true, body: { caption: 'the menu' } });
  // crabline records an uploaded file by its name, a file_id as given
  const photos = sends.map((s) => String(s.body['photo'])).sort();
  expect(photos).toEqual([expect.stringMatching(/^crabline-photo-/), expect.stringMatching(/\.png$/)]);
});

test('a text of exactly 4,096 UTF-16 units is sent whole; one unit more is never posted', async () => {
  // 100 emoji outside the BMP count 2 units each (TDLib would count them 1: characters)
  const longest = '😀'.repeat(100) + 'a'.repeat(4_096 - 200);
  expect(longest.length).toBe(4_096);
  const chat = '-1002000003';
  expect(await sendRun(chat, [{ type: 'text', text: longest }])).toEqual({ status: 'sent', error_code: null });
  const sends = await sendsTo(chat);
  expect(sends.map((s) => [s.body['text'], s.accepted])).toEqual([[longest, true]]);

  const over = '-1002000004';
  expect(await sendRun(over, [{ type: 'text', text: `${longest}b` }])).toEqual({ status: 'failed', error_code: 'text_too_long' });
  expect(await sendsTo(over)).toEqual([]);
});

test('a 51 MB video is refused up front: media_too_large, and no request for it reaches the server', async () => {
  // 51,000,000 bytes: under the 50 MiB request body crabline itself takes, so a video that got
  // through would be recorded (accepted) there
  const mediaId = await h.seedMedia(bot.tenantId, Buffer.alloc(51_000_000, 7), 'video/mp4');
  const chat = '-1002000005';
  expect(await sendRun(chat, [{ type: 'media', mediaId, caption: 'too big' }])).toEqual({ status: 'failed', error_code: 'media_too_large' });
  expect(await sendsTo(chat)).toEqual([]);
  // and nothing at all for that chat (no chat action either)
  expect((await record()).filter((e) => String(e.body?.['chat_id']) === chat)).toEqual([]);
}, 30_000);

/** Crabline learns a chat from a message a user posts in it (its admin inbound): a forum supergroup here. */
async function forumChat(chatId: string): Promise<void> {
  const res = await fetch(crabline.manifest.endpoints.adminInboundUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-crabline-admin-token': crabline.manifest.adminToken },
    body: JSON.stringify({ chatId, chatType: 'supergroup', isForum: true, text: 'hello' }),
  });
  if (!res.ok) throw new Error(`crabline inbound: ${res.status} ${await res.text()}`);
}

test('a forum topic: the post lands in its topic (message_thread_id), the same chat as a plain target in General, each once', async () => {
  const forum = '-1002000006';
  await forumChat(forum);
  // the topic as a bot makes one, through crabline's createForumTopic
  const created = await fetch(`${crabline.manifest.endpoints.apiRoot}/bot${crabline.manifest.botToken}/createForumTopic`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ chat_id: forum, name: 'Announcements' }),
  });
  const topic = ((await created.json()) as { result: { message_thread_id: number } }).result.message_thread_id;
  expect(topic).toBeGreaterThan(0);

  const parts: MessagePart[] = [{ type: 'text', text: 'Topic news' }];
  const runId = await h.seedRun({ tenantId: bot.tenantId, accountId: bot.accountId, targets: [forum, forum], threads: [topic, 0], parts });
  // typing first for this run: the chat action shows in the topic it precedes
  const typing = (value: string | null) => h.tdb.db.updateTable('accounts').set({ typing: value }).where('id', '=', bot.accountId).execute();
  await typing(JSON.stringify({ charsPerSecond: 20, maxSeconds: 1 }));
  await driveRun(h, runId).finally(() => typing(null));
  expect(await h.tdb.db.selectFrom('run_targets').select(['thread_id', 'status']).where('run_id', '=', runId).orderBy('thread_id').execute()).toEqual([
    { thread_id: 0, status: 'sent' },
    { thread_id: topic, status: 'sent' },
  ]);
  const sends = await sendsTo(forum);
  const posted = sends.map((s) => [s.body['message_thread_id'] ?? 'General', s.body['text'], s.accepted]);
  expect(posted).toHaveLength(2);
  expect(posted).toEqual(
    expect.arrayContaining([
      [topic, 'Topic news', true],
      ['General', 'Topic news', true],
    ]),
  );
  const actions = (await record()).filter((e) => e.path.endsWith('/sendChatAction') && String(e.body['chat_id']) === forum);
  expect(actions.map((a) => [a.body['message_thread_id'] ?? 'General', a.body['action'], a.accepted])).toEqual(
    expect.arrayContaining([
      [topic, 'typing', true],
      ['General', 'typing', true],
    ]),
  );
});

test('a topic of a chat that is no forum: crabline refuses it as Telegram does, and the target fails', async () => {
  const plain = '-1002000007';
  const runId = await h.seedRun({
    tenantId: bot.tenantId,
    accountId: bot.accountId,
    targets: [plain],
    threads: [4],
    parts: [{ type: 'text', text: 'nowhere' }],
  });
  await driveRun(h, runId);
  expect((await h.targets(runId)).map((t) => t.status)).toEqual(['failed']);
  expect((await sendsTo(plain)).map((s) => [s.body['message_thread_id'], s.accepted])).toEqual([[4, false]]);
});

test("crabline's record, all chats: each got exactly its one message", async () => {
  const sends = (await record()).filter((e) => /\/send(Message|Photo|Video|Document|Animation|Audio)$/.test(e.path) && e.accepted);
  const perChat = new Map<string, number>();
  // a chat's topic is a destination of its own
  const where = (s: Recorded) => `${String(s.body['chat_id'])}${s.body['message_thread_id'] ? `/${String(s.body['message_thread_id'])}` : ''}`;
  for (const s of sends) perChat.set(where(s), (perChat.get(where(s)) ?? 0) + 1);
  const topic = sends.find((s) => s.body['message_thread_id'])?.body['message_thread_id'];
  expect(Object.fromEntries(perChat)).toEqual({
    '-1002000001': 1,
    '-1002000002': 1,
    '-1002000012': 1,
    '-1002000003': 1,
    '-1002000006': 1,
    [`-1002000006/${String(topic)}`]: 1,
  });
  expect(sends.every((s) => s.accepted === true)).toBe(true);
});
