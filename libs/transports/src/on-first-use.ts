import type { TransportShape } from './platform-shapes.js';
import type { Transport } from './transport.js';

/**
 * `load` run once, on the first call, and its promise shared by every caller; a failed load is
 * tried again on the next call. `loaded()` is the value when it has loaded, without loading it.
 */
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
 * A transport built on its first use: the services hold WhatsApp's and Telegram user accounts'
 * transports this way, so their platform libraries load only when such an account sends. Its
 * `shape` (platform, limits) is known before; the transport built must match it and have every
 * optional method (readiness, typing, directory), since the send path tells a transport's
 * abilities by their presence and this one has them all.
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
    // never built: nothing to close (a build under way is awaited, then closed)
    close: async () => {
      const loading = transport.loaded();
      if (loading) await (await loading.catch(() => null))?.close();
    },
  };
}
