import { createHash } from 'node:crypto';

/** Derived from the idempotency key in WhatsApp Web's id shape ('3EB0' + 18 hex): a retry sends the same id, the same message. */
export function whatsappMessageId(idempotencyKey: string): string {
  return `3EB0${createHash('sha256').update(idempotencyKey).digest('hex').toUpperCase().slice(0, 18)}`;
}

/** A full JID as it is, a phone number as a user, `creator-timestamp` as an old-style group; null when not addressable. */
export function chatJid(chatId: string): string | null {
  const id = chatId.trim();
  if (/^[0-9]{5,20}(-[0-9]{5,20})?@g\.us$/.test(id)) return id;
  if (/^[0-9]{5,20}(:[0-9]{1,3})?@(s\.whatsapp\.net|lid|newsletter)$/.test(id)) return id;
  const phone = id.replace(/^\+/, '');
  if (/^[1-9][0-9]{6,14}$/.test(phone)) return `${phone}@s.whatsapp.net`;
  if (/^[0-9]{5,20}-[0-9]{5,20}$/.test(id)) return `${id}@g.us`;
  return null;
}
