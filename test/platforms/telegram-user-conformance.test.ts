import { describeTransportConformance } from './conformance.js';
import { dialogsOf, startTelegramUserHarness } from './telegram-user-setup.js';

// The telegram_user transport (the REAL GramJS client, random_id, Redis-leased connection, peers
// in PostgreSQL) against the FAKE Telegram on the wire, through the conformance cases, with
// Telegram's per-chat pace (20 a minute) on as in production. Each account is in every chat the
// cases send to (supergroups), its directory synced so their access hashes are kept.

const chatId = (i: number) => `-100${1_000_000 + i}`;
/** the chats the conformance cases address (conformance.ts) */
const CHATS = [0, 100, 200, 300].flatMap((from) => Array.from({ length: 6 }, (_, i) => chatId(from + i)));

describeTransportConformance('telegram_user', async () => {
  const t = await startTelegramUserHarness({ chatPacePerMinute: { telegram_user: 20 } });
  const { fake, h } = t;
  return {
    harness: h,
    chatId,
    seedAccount: async (opts = {}) => {
      const a = await t.seedSignedIn({ ...opts, dialogs: dialogsOf(CHATS) });
      return { tenantId: a.tenantId, accountId: a.accountId, handle: a.userId };
    },
    delivered: async (account) => fake.messagesOf(account.handle).map((m) => ({ chatId: m.chatId, text: m.text, receivedAt: m.at })),
    uploads: async (account) => fake.uploads.filter((u) => u.userId === account.handle).length,
    injectAccountWait: async (account, seconds) => fake.flood(account.handle, seconds),
    injectChatWait: async (account, chatId, seconds) => fake.slowMode(account.handle, chatId, seconds),
    close: () => t.close(),
  };
});
