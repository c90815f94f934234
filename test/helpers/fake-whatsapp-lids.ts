import type { LidMapping } from '@metronome/transports/whatsapp';
import { isLidUser, isPnUser, jidDecode, type SignalKeyStore } from '@whiskeysockets/baileys';

/**
 * FAKE WhatsApp identities: the LID the server gave each user (one per phone number), and a
 * socket's LID mapping as Baileys 7 keeps it (Signal/lid-mapping.js): in the account's own
 * auth key store, kind `lid-mapping`, `<phone user>` → `<lid user>` and `<lid user>_reverse` →
 * `<phone user>`. Learnt as Baileys learns it: a send to a phone number looks up the user's
 * devices with their LID and stores the pair; a lookup by phone number that misses asks the
 * server (USync). A lookup by LID never asks: a contact that wrote only by LID stays unknown.
 */
export class FakeWhatsAppLids {
  private readonly lidByPhone = new Map<string, string>();

  /** The server knows user `phone` (digits) by `lid` (digits). */
  assign(phone: string, lid: string): void {
    this.lidByPhone.set(phone, lid);
  }

  lidOf(phoneUser: string): string | undefined {
    return this.lidByPhone.get(phoneUser);
  }
}

/** A socket's `signalRepository.lidMapping` over its key store, answering in Baileys' shapes (a device in each JID). */
export function fakeLidMapping(keys: () => SignalKeyStore, server: FakeWhatsAppLids): LidMapping & { learn(jid: string): Promise<void> } {
  const store = async (pnUser: string, lidUser: string) => keys().set({ 'lid-mapping': { [pnUser]: lidUser, [`${lidUser}_reverse`]: pnUser } });
  return {
    async getPNForLID(lid) {
      const d = isLidUser(lid) ? jidDecode(lid) : undefined;
      if (!d) return null;
      const pnUser = (await keys().get('lid-mapping', [`${d.user}_reverse`]))[`${d.user}_reverse`];
      return pnUser ? `${pnUser}:${d.device ?? 0}@s.whatsapp.net` : null;
    },
    async getLIDForPN(pn) {
      const d = isPnUser(pn) ? jidDecode(pn) : undefined;
      if (!d) return null;
      let lidUser = (await keys().get('lid-mapping', [d.user]))[d.user];
      if (!lidUser) {
        lidUser = server.lidOf(d.user);
        if (lidUser) await store(d.user, lidUser);
      }
      return lidUser ? `${lidUser}${d.device ? `:${d.device}` : ''}@lid` : null;
    },
    /** A send to `jid`: the device lookup stores the user's LID pair, when the server has one. */
    async learn(jid) {
      const d = isPnUser(jid) ? jidDecode(jid) : undefined;
      const lidUser = d ? server.lidOf(d.user) : undefined;
      if (d && lidUser) await store(d.user, lidUser);
    },
  };
}
