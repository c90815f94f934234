import { jidNormalizedUser, normalizeMessageContent, type WAMessage } from '@whiskeysockets/baileys';

/** A text a person wrote to the account in a one-to-one chat. */
export interface IncomingText {
  /** The user's JID, its phone number spellings, and the LID JID when WhatsApp addressed the chat by LID. */
  chatIds: string[];
  text: string;
  /** `chatIds` plus the same person's other identity (phone number ↔ LID); may query WhatsApp, so asked only when needed. */
  allChatIds?: () => Promise<string[]>;
}

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
  return [];
}

/**
 * One-to-one texts in a `messages.upsert` batch, live or held while no socket was open. Not `fromMe`, not groups (one member's
 * "stop" speaks for nobody else); a `conversation` or `extendedTextMessage`, inside any ephemeral or view-once wrapper.
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
