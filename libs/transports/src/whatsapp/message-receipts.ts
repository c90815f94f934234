import { WAMessageStatus, type WAMessageKey } from '@whiskeysockets/baileys';

// Receipts as Baileys tells them (handleReceipt): one-to-one chats as `messages.update` with a status, groups as
// `message-receipt.update`, one per member.

export interface MessageReceipt {
  accountId: string;
  messageId: string;
  /** The send's own chat id when this replica wrote it, else every form of the JID (a late receipt after a restart). */
  chatIds: string[];
  status: 'delivered' | 'read';
  at: Date;
  member?: string;
  memberCount?: number | null;
}

export function directReceipt(
  key: WAMessageKey,
  update: { status?: number | null; messageTimestamp?: unknown },
  now: number,
): { status: 'delivered' | 'read'; at: Date } | null {
  if (!key.fromMe || !key.id || typeof update.status !== 'number') return null;
  const status =
    update.status === WAMessageStatus.DELIVERY_ACK
      ? 'delivered'
      : update.status === WAMessageStatus.READ || update.status === WAMessageStatus.PLAYED
        ? 'read'
        : null;
  if (status === null) return null;
  return { status, at: timeOf(update.messageTimestamp, now) };
}

export function memberReceipt(
  key: WAMessageKey,
  receipt: { userJid?: string | null; receiptTimestamp?: unknown; readTimestamp?: unknown; playedTimestamp?: unknown },
  now: number,
): { member: string; status: 'delivered' | 'read'; at: Date } | null {
  if (!key.id || !receipt.userJid) return null;
  const read = receipt.readTimestamp ?? receipt.playedTimestamp;
  if (read != null) return { member: receipt.userJid, status: 'read', at: timeOf(read, now) };
  if (receipt.receiptTimestamp != null) return { member: receipt.userJid, status: 'delivered', at: timeOf(receipt.receiptTimestamp, now) };
  return null;
}

export function chatIdsOf(jid: string): string[] {
  const user = /^([0-9]{5,20})(:[0-9]{1,3})?@s\.whatsapp\.net$/.exec(jid)?.[1];
  return user ? [jid, `+${user}`, user] : [jid];
}

/** Seconds since the epoch (a number, a Long or a string); now when absent, never later than now. */
function timeOf(t: unknown, now: number): Date {
  const seconds = Number(typeof t === 'object' && t !== null && 'toNumber' in t ? (t as { toNumber(): number }).toNumber() : t);
  if (!Number.isFinite(seconds) || seconds <= 0) return new Date(now);
  return new Date(Math.min(seconds * 1000, now));
}

const user = (j: string | null | undefined) => (j ? j.replace(/:[0-9]+@/, '@') : null);

/** Baileys tells a read by the operator's own devices as a member's: those are no reader. */
export function isOwnJid(jid: string, me: { id: string; lid?: string } | undefined): boolean {
  const u = user(jid);
  return u !== null && (u === user(me?.id) || u === user(me?.lid));
}

export function groupMemberCount(
  group: { participants: { id: string; lid?: string | null; phoneNumber?: string | null }[] } | undefined,
  me: { id: string; lid?: string } | undefined,
): number | null {
  if (!group) return null;
  const own = new Set([user(me?.id), user(me?.lid)].filter((j): j is string => j !== null));
  return group.participants.filter((p) => !own.has(user(p.id)!) && !(p.lid && own.has(user(p.lid)!)) && !(p.phoneNumber && own.has(user(p.phoneNumber)!)))
    .length;
}
