import { startSenderHarness } from '../helpers/sender-harness.js';
import { describeTransportConformance, type DeliveredMessage } from './conformance.js';

// The HTTP transport against the sandbox (CONTRACT §5), through the conformance cases.

/** Idempotency keys of the messages this setup sends itself to start a chat's slow mode. */
const PRIME = 'conformance-prime:';
/** The API key of every account here: the setup's own priming message must carry it too. */
const API_KEY = 'conformance-api-key-0001';

interface SandboxMessage {
  chatId: string;
  idempotencyKey: string;
  part: { type: 'text'; text: string } | { type: 'media'; mediaRef: string; caption?: string | null };
  receivedAt: number;
}

describeTransportConformance('http', async () => {
  const harness = await startSenderHarness();
  return {
    harness,
    chatId: (i) => `chat-${i}`,
    seedAccount: async (opts = {}) => {
      const a = await harness.seedAccount({ credentials: { apiKey: API_KEY }, ...opts });
      return { tenantId: a.tenantId, accountId: a.accountId, handle: a.externalId };
    },
    delivered: async (account) => {
      const { items } = await harness.sandboxGet<{ items: SandboxMessage[] }>(`/sandbox/messages?account=${encodeURIComponent(account.handle)}`);
      return items
        .filter((m) => !m.idempotencyKey.startsWith(PRIME))
        .map((m): DeliveredMessage => ({ chatId: m.chatId, text: m.part.type === 'text' ? m.part.text : (m.part.caption ?? null), receivedAt: m.receivedAt }));
    },
    uploads: async (account) => {
      const stats = await harness.sandboxGet<{ uploads: { account: string; count: number }[] }>('/sandbox/stats');
      return stats.uploads.filter((u) => u.account === account.handle).reduce((n, u) => n + u.count, 0);
    },
    injectAccountWait: async (account, seconds) => {
      // the sandbox answers the account's next send with flood_wait, then refuses it for that long
      await harness.sandboxPut(`/sandbox/accounts/${encodeURIComponent(account.handle)}`, { floodWaitSeconds: seconds });
    },
    injectChatWait: async (account, chatId, seconds) => {
      // The sandbox's per-chat wait is slow mode, counted from the chat's last accepted message:
      // one message now, then slow mode, refuses the chat for `seconds` from now.
      const res = await fetch(`${harness.sandboxUrl}/v1/accounts/${encodeURIComponent(account.handle)}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', 'idempotency-key': `${PRIME}${chatId}` },
        body: JSON.stringify({ chatId, part: { type: 'text', text: 'prime' }, partIndex: 0, partCount: 1 }),
      });
      if (!res.ok) throw new Error(`sandbox refused the priming message: ${res.status}`);
      await harness.sandboxPut(`/sandbox/chats/${encodeURIComponent(account.handle)}/${encodeURIComponent(chatId)}`, { slowModeSeconds: seconds });
    },
    close: () => harness.close(),
  };
});
