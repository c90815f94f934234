// Nodes the project's FAKE WhatsApp Web server (wire-whatsapp-server.ts) pushes or answers with,
// each as WhatsApp sends it and as Baileys reads it (pinned in test/platforms/whatsapp-wire-server.test.ts).
import type { BinaryNode } from '@whiskeysockets/baileys';

const now = () => String(Math.floor(Date.now() / 1000));

/** A `mex` notification as WhatsApp pushes one (Baileys' handleMexNotification reads `update` op_name and its JSON). */
export function mexNotification(opName: string, data: Record<string, unknown>): BinaryNode {
  const update: BinaryNode = { tag: 'update', attrs: { op_name: opName }, content: Buffer.from(JSON.stringify({ data })) };
  return { tag: 'notification', attrs: { type: 'mex', id: `mex-${Math.random().toString(16).slice(2)}`, from: 's.whatsapp.net', t: now() }, content: [update] };
}

/**
 * A person's privacy token for the account (`privacy_token` notification, type trusted_contact),
 * as WhatsApp pushes it once that person wrote to the account: Baileys stores it as the chat's
 * `tctoken` key under `senderLid`, what makes the chat an existing one.
 */
export function privacyTokenNotification(fromPn: string, senderLid: string): BinaryNode {
  const token: BinaryNode = { tag: 'token', attrs: { type: 'trusted_contact', t: now(), jid: fromPn }, content: Buffer.from('wire-token') };
  return {
    tag: 'notification',
    attrs: { type: 'privacy_token', id: `tc-${Math.random().toString(16).slice(2)}`, from: fromPn, sender_lid: senderLid, t: now() },
    content: [{ tag: 'tokens', attrs: {}, content: [token] }],
  };
}

/**
 * A device of the recipient asking for a message again (a `retry` receipt: it got the message and
 * could not decrypt it), as WhatsApp relays one: Baileys re-sends the message to that device.
 */
export function retryReceipt(messageId: string, fromDevice: string): BinaryNode {
  return {
    tag: 'receipt',
    attrs: { id: messageId, from: fromDevice, type: 'retry', t: now() },
    content: [{ tag: 'retry', attrs: { count: '1', id: messageId, t: now(), v: '1' } }],
  };
}

/**
 * A receipt of a message the account sent, as WhatsApp relays it: `type` read, `sender` (another
 * device of the account got it), absent for a delivery; `participant` names the member in a group.
 */
export function receipt(messageId: string, from: string, type?: 'read' | 'sender', participant?: string): BinaryNode {
  return { tag: 'receipt', attrs: { id: messageId, from, t: now(), ...(type && { type }), ...(participant && { participant }) } };
}

/** A group as WhatsApp describes it (Baileys' extractGroupMetadata), its members by phone number; `admins` set: only they post. */
export function groupNode(jid: string, members: string[], admins?: string[]): BinaryNode {
  const participants = members.map((m): BinaryNode => ({ tag: 'participant', attrs: { jid: m, ...(admins?.includes(m) && { type: 'admin' }) } }));
  const announcement: BinaryNode[] = admins ? [{ tag: 'announcement', attrs: {} }] : [];
  return {
    tag: 'group',
    attrs: { id: jid.split('@')[0]!, subject: `group ${jid}`, creation: now(), s_t: now(), addressing_mode: 'pn' },
    content: [...participants, ...announcement],
  };
}
