import type { TransportShape } from './platform-shapes.js';
import type { Transport } from './transport.js';

/** `load` run once and shared; a failed load is tried again on the next call. `loaded()` never loads. */
export function onFirstUse<T>(load: () => Promise<T>): { get(): Promise<T>; loaded(): Promise<T> | null } {
  let pending: Promise<T> | null = null;
  return {
    get: () => {
      pending ??= load().catch((error: unknown) => {
        pending = null;
        throw error;
      });
      return pending;
    },
    loaded: () => pending,
  };
}

/**
 * WhatsApp and Telegram user transports are built on first use, so their libraries load only when such an account sends. It
 * must have every optional method: the send path reads abilities by their presence.
 */
export function transportOnFirstUse(shape: TransportShape, build: () => Promise<Transport>): Transport {
  const transport = onFirstUse(async () => {
    const built = await build();
    const fields: (keyof TransportShape)[] = ['platform', 'mediaUpload', 'textLimits', 'typingLastsMs'];
    const differs = fields.filter((k) => JSON.stringify(built[k]) !== JSON.stringify(shape[k]));
    if (differs.length > 0) throw new Error(`the ${shape.platform} transport built differs from its shape in ${differs.join(', ')}`);
    if (!built.readiness || !built.showTyping || !built.syncDirectory)
      throw new Error(`the ${shape.platform} transport built lacks readiness, showTyping or syncDirectory`);
    return built as Required<Transport>;
  });
  return {
    ...shape,
    prepareMedia: async (account, media, signal) => (await transport.get()).prepareMedia(account, media, signal),
    readiness: async (accountId) => (await transport.get()).readiness(accountId),
    showTyping: async (account, chatId, part, threadId) => (await transport.get()).showTyping(account, chatId, part, threadId),
    syncDirectory: async (account, sink, signal) => (await transport.get()).syncDirectory(account, sink, signal),
    send: async (account, message) => (await transport.get()).send(account, message),
    close: async () => {
      const loading = transport.loaded();
      if (loading) await (await loading.catch(() => null))?.close();
    },
  };
}
