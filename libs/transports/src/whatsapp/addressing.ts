import { createHash } from 'node:crypto';

/**
 * The WhatsApp id of a message: deterministic per (run, chat, part), derived from the
 * sender's idempotency key, in the shape WhatsApp Web gives its own ids ('3EB0' + 18 hex
 * digits). A retry of the same part sends the same id, which recipients treat as the same
 * message, never a second one.
 */
export function whatsappMessageId(idempotencyKey: string): string {
  return `3EB0${createHash('sha256').update(idempotencyKey).digest('hex').toUpperCase().slice(0, 18)}`;
}

/**
 * The JID of a chat id as campaigns name it: a full JID as it is (`…@g.us`, `…@s.whatsapp.net`),
 * a phone number in international format as a user, `creator-timestamp` as an old-style group.
 * Null when it names nothing WhatsApp can address.
 */
export function chatJid(chatId: string): string | null {
  const id = chatId.trim();
  if (/^[0-9]{5,20}(-[0-9]{5,20})?@g\.us$/.test(id)) return id;
  if (/^[0-9]{5,20}(:[0-9]{1,3})?@(s\.whatsapp\.net|lid|newsletter)$/.test(id)) return id;
  const phone = id.replace(/^\+/, '');
  if (/^[1-9][0-9]{6,14}$/.test(phone)) return `${phone}@s.whatsapp.net`;
  if (/^[0-9]{5,20}-[0-9]{5,20}$/.test(id)) return `${id}@g.us`;
  return null;
}
