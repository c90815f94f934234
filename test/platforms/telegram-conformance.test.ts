import { randomBytes } from 'node:crypto';
import { describeTransportConformance } from './conformance.js';
import { startTelegramHarness } from '../helpers/telegram-harness.js';

// The Telegram transport against a fake of the Bot API, through the conformance cases, with
// Telegram's per-chat pace (20 a minute) on as in production.

let nextBot = 700_000;

describeTransportConformance('telegram', async () => {
  const { fake, h: harness } = await startTelegramHarness({ chatPacePerMinute: { telegram: 20 } });
  return {
    harness,
    // supergroups: Telegram's group ids are negative
    chatId: (i) => `-100${1_000_000 + i}`,
    seedAccount: async (opts = {}) => {
      const botId = String(nextBot++);
      const token = `${botId}:${randomBytes(24).toString('base64url')}`;
      fake.addBot(token);
      const a = await harness.seedAccount({ ...opts, platform: 'telegram', externalId: botId, credentials: { botToken: token } });
      return { tenantId: a.tenantId, accountId: a.accountId, handle: token };
    },
    delivered: async (account) =>
      fake.messages({ token: account.handle }).map((m) => ({ chatId: m.chatId, text: m.text ?? m.caption, receivedAt: m.receivedAt, upload: m.upload })),
    uploads: async (account) => fake.uploads(account.handle),
    injectAccountWait: async (account, seconds) => fake.floodBot(account.handle, seconds),
    injectChatWait: async (account, chatId, seconds) => fake.floodChat(account.handle, chatId, seconds),
    close: async () => {
      await harness.close();
      await fake.close();
    },
  };
});
