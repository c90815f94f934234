import { isLidUser, isPnUser, jidNormalizedUser } from '@whiskeysockets/baileys';
import { spellings, type IncomingText } from './incoming.js';

/**
 * Baileys' LID ↔ phone-number JID mapping (auth key store, `lid-mapping`). `getLIDForPN` may ask WhatsApp on a miss; both answer
 * with a device in the JID or null.
 */
export interface LidMapping {
  getPNForLID(lid: string): Promise<string | null>;
  getLIDForPN(pn: string): Promise<string | null>;
}

const user = (jid: string | null | undefined): string | null => (jid ? jidNormalizedUser(jid) || null : null);

export async function phoneJidOf(jid: string, mapping: LidMapping | undefined): Promise<string> {
  if (!mapping || !isLidUser(jid)) return jid;
  const pn = await mapping.getPNForLID(jid).catch(() => null);
  return user(pn) ?? jid;
}

/** Both identities of the users among `jids`, as the mapping knows them; a failed lookup leaves its JID alone. */
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

/** So an opt-out from a contact WhatsApp names only by LID also lists the phone number campaigns name them by. */
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
