import { randomBytes } from 'node:crypto';
import { FakeTelegramBotApi } from '../helpers/fake-telegram-bot-api.js';
import { imageBytes } from '../helpers/fake-telegram-files.js';
import { api, startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/test-env.js';

// Telegram end to end with real processes: API → PostgreSQL → scheduler → BullMQ → two sender
// processes → a fake of the Telegram Bot API (TELEGRAM_API_URL), started by this test. The bot
// token goes in through the API, sealed, and the senders open it with the same SECRETS_KEY.

let fake: FakeTelegramBotApi;
let stack: Stack;
beforeAll(async () => {
  fake = await FakeTelegramBotApi.start();
  // one send a second to each chat: the per-chat pace is met and judged, without Telegram's own
  // 20/min making the file wait 3 s between a chat's two parts
  stack = await startStack({ senders: 2, senderEnv: { TELEGRAM_API_URL: fake.url, CHAT_MAX_SEND_PER_MINUTE_TELEGRAM: '60' } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await fake?.close();
}, 60_000);

const groups = (n: number) => Array.from({ length: n }, (_, i) => `-100${3_000_000 + i}`);

test('a text and a photo to 40 groups from two sender processes: exactly once, in order, the photo uploaded once; a flooded group waits alone', async () => {
  const tenant = await api(stack, 'POST', '/v1/tenants', stack.adminToken, { name: 'tg' });
  const token: string = tenant.body.token;
  const botToken = `7001:${randomBytes(24).toString('base64url')}`;
  fake.addBot(botToken);
  const account = await api(stack, 'POST', '/v1/accounts', token, {
    platform: 'telegram',
    name: 'Bot',
    credentials: { botToken },
    maxSendPerMinute: 6000,
    groupConcurrency: 4,
  });
  expect(account.status).toBe(201);
  const photo = await api(stack, 'POST', '/v1/media?filename=p.jpg', token, imageBytes('jpeg', 3000), { 'content-type': 'image/jpeg' });
  expect(photo.status).toBe(201);
  const targets = groups(40);
  // this group answers 429 retry_after 3 for its first send: only it waits
  const floodEnds = Date.now() + 3000;
  fake.floodChat(botToken, targets[0]!, 3);
  const campaign = await api(stack, 'POST', '/v1/campaigns', token, {
    accountId: account.body.id,
    name: 'tg',
    timezone: 'UTC',
    schedule: { type: 'once', at: new Date().toISOString() },
    messages: [
      { type: 'text', text: 'Good morning' },
      { type: 'media', mediaId: photo.body.id, caption: 'today' },
    ],
    targets,
    active: false,
  });
  expect(campaign.status).toBe(201);
  const started = Date.now();
  const run = await api(stack, 'POST', `/v1/campaigns/${campaign.body.id}/runs`, token);
  expect(run.status).toBe(201);

  const done = await eventually(
    'the run to finish',
    async () => {
      const r = await api(stack, 'GET', `/v1/runs/${run.body.id}`, token);
      return ['queued', 'running'].includes(r.body.status) ? null : r.body;
    },
    60_000,
    250,
  );
  expect(done.status).toBe('success');
  expect(done.counts).toMatchObject({ total: 40, sent: 40, unknown: 0, failed: 0 });

  const messages = fake.messages({ token: botToken });
  expect(messages).toHaveLength(80);
  for (const chat of targets) {
    const got = messages.filter((m) => m.chatId === chat);
    expect(got.map((m) => m.method)).toEqual(['sendMessage', 'sendPhoto']);
    expect(got[0]!.text).toBe('Good morning');
    expect(got[1]!.caption).toBe('today');
    // the chat's pace at the platform (60/min), less a little for the arrival's jitter; the
    // first may have come up to its stamp's slack earlier (the fake's loop was held up)
    expect(got[1]!.receivedAt - got[0]!.receivedAt + got[0]!.stampSlackMs).toBeGreaterThanOrEqual(900);
  }
  expect(messages.filter((m) => m.upload)).toHaveLength(1);
  // the flooded group was refused once and served after its wait; nobody else was held up
  const refused = fake.refusals({ token: botToken });
  expect(refused.map((r) => [r.chatId, r.status])).toEqual([[targets[0], 429]]);
  const flooded = messages.filter((m) => m.chatId === targets[0]);
  expect(flooded[0]!.receivedAt).toBeGreaterThanOrEqual(floodEnds);
  const others = messages.filter((m) => m.chatId !== targets[0] && m.method === 'sendMessage');
  expect(Math.min(...others.map((m) => m.receivedAt))).toBeLessThan(started + 3000);
  // a group's wait is that group's: the bot itself was never blocked
  const bot = await stack.db.db.selectFrom('accounts').select('blocked_until').where('id', '=', account.body.id).executeTakeFirstOrThrow();
  expect(bot.blocked_until).toBeNull();
}, 90_000);
