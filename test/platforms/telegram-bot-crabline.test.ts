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

test("crabline's record, all chats: each got exactly its one message", async () => {
  const sends = (await record()).filter((e) => /\/send(Message|Photo|Video|Document|Animation|Audio)$/.test(e.path));
  const perChat = new Map<string, number>();
  for (const s of sends) perChat.set(String(s.body['chat_id']), (perChat.get(String(s.body['chat_id'])) ?? 0) + 1);
  expect(Object.fromEntries(perChat)).toEqual({ '-1002000001': 1, '-1002000002': 1, '-1002000012': 1, '-1002000003': 1 });
  expect(sends.every((s) => s.accepted === true)).toBe(true);
});
