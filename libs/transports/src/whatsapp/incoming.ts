import { jidNormalizedUser, normalizeMessageContent, type WAMessage } from '@whiskeysockets/baileys';

/** A text a person wrote to the account in a one-to-one chat. */
export interface IncomingText {
  /**
   * Every chat id a campaign may name the sender by: the user's JID (`60123456789@s.whatsapp.net`),
   * its phone number (`60123456789`, `+60123456789`), and the LID JID when WhatsApp addressed the
   * chat by LID (`…@lid`, with the phone JID beside it when it gave one).
   */
  chatIds: string[];
  text: string;
  /**
   * `chatIds` and the ids of the same person under their other identity (phone number ↔ LID)
   * as the account's LID mapping knows it (lid-identity.ts); set by the socket pool. Asked only
   * when needed: it may query WhatsApp.
   */
  allChatIds?: () => Promise<string[]>;
}

/** The chat ids of one user JID, as campaigns may spell them (libs/transports `chatJid`). */
export function spellings(jid: string | null | undefined): string[] {
  if (!jid) return [];
  if (jid.endsWith('@s.whatsapp.net')) {
    const user = jidNormalizedUser(jid);
    const phone = user.slice(0, user.indexOf('@'));
    return user && phone ? [user, phone, `+${phone}`] : [];
  }
  if (jid.endsWith('@lid')) {
    const user = jidNormalizedUser(jid);
    return user ? [user] : [];
  }
  // groups (@g.us), status and broadcast lists, newsletters: not a person's own chat
  return [];
}

/**
 * The one-to-one texts in a `messages.upsert` batch, whether they arrived live (`notify`) or were
 * held by the server while no socket was open and delivered on connect (`append`). Skipped: the
 * account's own messages (`fromMe`: sent here or from the phone), and group chats, where one
 * member's "stop" speaks for nobody else and the campaign writes to the group, not to them.
 * Text is a plain `conversation` or an `extendedTextMessage` (a reply, a text with a link),
 * inside any ephemeral or view-once wrapper.
 */
export function incomingTexts(messages: readonly WAMessage[]): IncomingText[] {
  const out: IncomingText[] = [];
  for (const m of messages) {
    if (!m.key || m.key.fromMe) continue;
    const content = normalizeMessageContent(m.message);
    const text = content?.conversation ?? content?.extendedTextMessage?.text;
    if (typeof text !== 'string' || text.length === 0) continue;
    const chatIds = [...new Set([...spellings(m.key.remoteJid), ...spellings(m.key.remoteJidAlt)])];
    if (chatIds.length === 0) continue;
    out.push({ chatIds, text });
  }
  return out;
}
