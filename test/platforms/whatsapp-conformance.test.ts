import { redisKeys } from '@metronome/redis';
import type { proto } from '@whiskeysockets/baileys';
import { describeTransportConformance, type DeliveredMessage } from './conformance.js';
import { startWhatsAppHarness } from './whatsapp-setup.js';

// The WhatsApp transport (real socket pool, Redis lease, PostgreSQL auth state, Baileys media
// code) against a FAKE WhatsApp network, through the conformance cases.
//
// WhatsApp answers no per-chat wait (it has no slow mode). The one per-chat wait a WhatsApp
// account meets is Metronome's own per-chat pace (CHAT_MAX_SEND_PER_MINUTE_WHATSAPP), so the
// chat-wait case holds that chat's pace slot for the time asked, as a recent send would.

const group = (i: number) => `1203630${String(i).padStart(11, '0')}@g.us`;

describeTransportConformance('whatsapp', async () => {
  const w = await startWhatsAppHarness({ chatPacePerMinute: { whatsapp: 600 } });
  const { h, network } = w;
  const chatPace = redisKeys(h.deps.queue.queue.opts.prefix!).chatPace;
  return {
    harness: h,
    chatId: (i) => {
      const jid = group(i);
      network.addGroup(jid, ['60100000001@s.whatsapp.net', '60100000002@s.whatsapp.net']);
      return jid;
    },
    seedAccount: async (opts = {}) => {
      const a = await w.seedPairedAccount(opts);
      return { ...a, handle: a.accountId };
    },
    delivered: async (account) =>
      network.messages
        .filter((m) => m.accountId === account.accountId)
        .map((m): DeliveredMessage => {
          const content = m.content as { text?: string } & proto.IMessage;
          const media = content.imageMessage ?? content.videoMessage ?? content.documentMessage;
          return { chatId: m.jid, text: content.text ?? media?.caption ?? null, receivedAt: m.at };
        }),
    uploads: async (account) => network.uploads.filter((u) => u.accountId === account.accountId).length,
    injectAccountWait: async (account, seconds) => {
      // WhatsApp's account-wide wait: every request answered `rate-overlimit` for a while
      network.overlimitUntil(account.accountId, h.clock.now() + seconds * 1000);
    },
    injectChatWait: async (account, chatId, seconds) => {
      const until = h.clock.now() + seconds * 1000;
      await h.redis.set(chatPace(account.accountId, chatId), String(until), 'PX', seconds * 1000 + 1000);
    },
    close: () => w.close(),
  };
});
