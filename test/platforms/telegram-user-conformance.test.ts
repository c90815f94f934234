import { describeTransportConformance } from './conformance.js';
import { startTelegramUserHarness } from './telegram-user-setup.js';

// The telegram_user transport (GramJS's client interface, random_id, Redis-leased connection)
// against a FAKE Telegram through the FAKE GramJS client, through the conformance cases, with
// Telegram's per-chat pace (20 a minute) on as in production.

describeTransportConformance('telegram_user', async () => {
  const t = await startTelegramUserHarness({ chatPacePerMinute: { telegram_user: 20 } });
  const { fake, h } = t;
  return {
    harness: h,
    chatId: (i) => `-100${1_000_000 + i}`,
    seedAccount: async (opts = {}) => {
      const a = await t.seedSignedIn(opts);
      return { tenantId: a.tenantId, accountId: a.accountId, handle: a.userId };
    },
    delivered: async (account) => fake.messagesOf(account.handle).map((m) => ({ chatId: m.chatId, text: m.text, receivedAt: m.at })),
    uploads: async (account) => fake.uploads.filter((u) => u.userId === account.handle).length,
    injectAccountWait: async (account, seconds) => fake.flood(account.handle, seconds),
    injectChatWait: async (account, chatId, seconds) => fake.slowMode(account.handle, chatId, seconds),
    close: () => t.close(),
  };
});
