import { isLidUser, isPnUser, jidNormalizedUser } from '@whiskeysockets/baileys';
import { spellings, type IncomingText } from './incoming.js';

/**
 * Baileys' mapping between a user's LID (`…@lid`) and phone-number JID (the socket's
 * `signalRepository.lidMapping`, kept in the account's auth key store under `lid-mapping`,
 * learnt from device lookups on sends and from the addresses of incoming messages).
 * `getPNForLID` reads what is known; `getLIDForPN` may ask WhatsApp on a miss (a USync query).
 * Both answer with a device in the JID (`60123456789:0@s.whatsapp.net`) or null.
 */
export interface LidMapping {
  getPNForLID(lid: string): Promise<string | null>;
  getLIDForPN(pn: string): Promise<string | null>;
}

const user = (jid: string | null | undefined): string | null => (jid ? jidNormalizedUser(jid) || null : null);

/** The phone-number JID (no device) of a LID JID when the mapping knows it; any other JID as it is. */
export async function phoneJidOf(jid: string, mapping: LidMapping | undefined): Promise<string> {
  if (!mapping || !isLidUser(jid)) return jid;
  const pn = await mapping.getPNForLID(jid).catch(() => null);
  return user(pn) ?? jid;
}

/**
 * Every identity of the users among `jids`, as the mapping knows them: the phone-number JID of
 * each LID and the LID of each phone-number JID, beside the JIDs themselves (no devices).
 * A lookup that fails leaves its JID alone: what the message named is still there.
 */
export async function bothIdentities(jids: readonly string[], mapping: LidMapping): Promise<string[]> {
  const out = new Set<string>();
  for (const jid of jids) {
    const self = user(jid);
    if (!self) continue;
    out.add(self);
    const other = isLidUser(self)
      ? await mapping.getPNForLID(self).catch(() => null)
      : isPnUser(self)
        ? await mapping.getLIDForPN(self).catch(() => null)
        : null;
    const normal = user(other);
    if (normal) out.add(normal);
  }
  return [...out];
}

/**
 * The incoming text with `allChatIds`: its chat ids and those of the same person under the
 * other identity (phone number ↔ LID), so an opt-out from a contact WhatsApp names only by LID
 * also lists the phone number campaigns name them by, and the reverse.
 */
export function withBothIdentities(message: IncomingText, mapping: LidMapping | undefined): IncomingText {
  if (!mapping) return message;
  return {
    ...message,
    allChatIds: async () => {
      const jids = message.chatIds.filter((id) => id.includes('@'));
      const all = (await bothIdentities(jids, mapping)).flatMap(spellings);
      return [...new Set([...message.chatIds, ...all])];
    },
  };
}
