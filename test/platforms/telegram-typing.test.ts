import { randomBytes } from 'node:crypto';
import type { MessagePart } from '@metronome/db';
import type { FakeTelegramBotApi } from '../helpers/fake-telegram-bot-api.js';
import { driveRun, type SenderHarness } from '../helpers/sender-harness.js';
import { imageBytes } from '../helpers/telegram-file.js';
import { startTelegramHarness } from '../helpers/telegram-harness.js';

// Typing first on Telegram (CONTRACT §3, accounts: typing): sendChatAction before each message,
// from the real sender job against the fake Bot API (which stamps actions with the manual
// clock), in the setup of telegram.test.ts.

const text = (t: string): MessagePart => ({ type: 'text', text: t });
const user = (i: number) => String(3_100_000 + i);

let fake: FakeTelegramBotApi;
let h: SenderHarness;
let nextBot = 700_000;

beforeAll(async () => {
  ({ fake, h } = await startTelegramHarness());
});
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

async function seedBot(typing: { charsPerSecond: number; maxSeconds: number } | null) {
  const botId = String(nextBot++);
  const token = `${botId}:${randomBytes(24).toString('base64url')}`;
  fake.addBot(token);
  const a = await h.seedAccount({ platform: 'telegram', externalId: botId, credentials: { botToken: token }, groupConcurrency: 1, maxSendPerMinute: 6 });
  await h.tdb.db
    .updateTable('accounts')
    .set({ typing: typing && JSON.stringify(typing) })
    .where('id', '=', a.accountId)
    .execute();
  return { ...a, token };
}

test('a chat action precedes each message by the typing time, renewed before Telegram drops it; a photo gets upload_photo', async () => {
  const bot = await seedBot({ charsPerSecond: 10, maxSeconds: 8 });
  const mediaId = await h.seedMedia(bot.tenantId, imageBytes('jpeg', 256), 'image/jpeg');
  const runId = await h.seedRun({
    tenantId: bot.tenantId,
    accountId: bot.accountId,
    targets: [user(1)],
    parts: [text('z'.repeat(70)), { type: 'media', mediaId, caption: 'ok' }],
  });
  await driveRun(h, runId);
  expect((await h.run(runId)).status).toBe('success');
  const [message, photo] = fake.messages({ token: bot.token });
  const actions = fake.chatActions({ token: bot.token });
  // 70 characters at 10 a second: 7 s, shown at its start and again 4.5 s later (Telegram shows one for 5 s)
  expect(actions.map((a) => a.action)).toEqual(['typing', 'typing', 'upload_photo']);
  expect(actions.slice(0, 2).map((a) => message!.receivedAt - a.at)).toEqual([7_000, 2_500]);
  // "ok": 2 characters, 200 ms before the photo
  expect(photo!.receivedAt - actions[2]!.at).toBe(200);
});

test('an account with typing null sends no chat action', async () => {
  const bot = await seedBot(null);
  await driveRun(h, await h.seedRun({ tenantId: bot.tenantId, accountId: bot.accountId, targets: [user(2), user(3)], parts: [text('hello')] }));
  expect(fake.messages({ token: bot.token })).toHaveLength(2);
  expect(fake.chatActions({ token: bot.token })).toEqual([]);
});

test('no chat action during a flood wait, and the first send after it goes without one', async () => {
  const bot = await seedBot({ charsPerSecond: 10, maxSeconds: 5 });
  const runId = await h.seedRun({ tenantId: bot.tenantId, accountId: bot.accountId, targets: [user(4), user(5), user(6)], parts: [text('w'.repeat(20))] });
  fake.floodBot(bot.token, 30);
  // the first send meets the flood (its typing, before, could not know): the account waits
  expect(await h.runJob(runId)).toBe('deferred');
  const [sendRefused] = fake.refusals({ token: bot.token }).filter((r) => r.method === 'sendMessage');
  const knownAt = sendRefused!.at;
  const floodEnd = knownAt + sendRefused!.retryAfter! * 1000;
  await driveRun(h, runId);
  expect((await h.run(runId)).status).toBe('success');

  const during = (at: number) => at > knownAt && at < floodEnd;
  expect(fake.chatActions({ token: bot.token }).filter((a) => during(a.at))).toEqual([]);
  expect(fake.refusals({ token: bot.token }).filter((r) => during(r.at))).toEqual([]);
  const [firstAfter, second] = fake.messages({ token: bot.token });
  expect(firstAfter!.receivedAt).toBeGreaterThanOrEqual(floodEnd);
  expect(fake.chatActions({ token: bot.token }).filter((a) => a.at >= knownAt && a.at <= firstAfter!.receivedAt)).toEqual([]);
  // the refused chat, back from the wait, goes without typing too; a chat that was not types inside the pace again
  expect(fake.chatActions({ token: bot.token, chatId: sendRefused!.chatId! }).filter((a) => a.at > knownAt)).toEqual([]);
  expect(second!.chatId).not.toBe(sendRefused!.chatId);
  expect(fake.chatActions({ token: bot.token, chatId: second!.chatId }).map((a) => second!.receivedAt - a.at)).toEqual([2_000]);
});
