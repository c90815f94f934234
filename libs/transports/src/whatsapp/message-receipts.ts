import { WAMessageStatus, type WAMessageKey } from '@whiskeysockets/baileys';

// Delivery and read receipts of messages this replica wrote, as Baileys tells them
// (Socket/messages-recv.js handleReceipt): one-to-one chats as `messages.update` with a status
// (DELIVERY_ACK, READ, PLAYED) and the receipt's time as `messageTimestamp`; groups as
// `message-receipt.update`, one per member (`receiptTimestamp` or `readTimestamp`).

/** A receipt of a message of the account, told to the pool's `onReceipt`. */
export interface MessageReceipt {
  accountId: string;
  messageId: string;
  /**
   * The chat ids the target may name: the one the send was given when this replica wrote it,
   * else the JID's forms (a late receipt after a restart: `…@g.us`; `601…@s.whatsapp.net`,
   * `+601…`, `601…`).
   */
  chatIds: string[];
  status: 'delivered' | 'read';
  at: Date;
  /** groups: the member whose receipt it is */
  member?: string;
  /** groups: the members it went to (the account itself left out), when the group is known */
  memberCount?: number | null;
}

/** What a `messages.update` entry says as a receipt: its status and time, or null (not a receipt). */
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

/** What a `message-receipt.update` entry says: the member, status and time, or null. */
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

/** The chat ids a JID may be named by in a campaign (addressing.ts chatJid, backwards). */
export function chatIdsOf(jid: string): string[] {
  const user = /^([0-9]{5,20})(:[0-9]{1,3})?@s\.whatsapp\.net$/.exec(jid)?.[1];
  return user ? [jid, `+${user}`, user] : [jid];
}

/** Seconds since the epoch (a number, a Long or a string) as a time; now when absent, never later than now. */
function timeOf(t: unknown, now: number): Date {
  const seconds = Number(typeof t === 'object' && t !== null && 'toNumber' in t ? (t as { toNumber(): number }).toNumber() : t);
  if (!Number.isFinite(seconds) || seconds <= 0) return new Date(now);
  return new Date(Math.min(seconds * 1000, now));
}

const user = (j: string | null | undefined) => (j ? j.replace(/:[0-9]+@/, '@') : null);

/**
 * Whether `jid` is one of the account's own devices (by phone number or LID). Baileys tells a
 * group receipt of the operator's own phone or other linked device (`sender`, `read-self`) as a
 * member's read: those are no reader.
 */
export function isOwnJid(jid: string, me: { id: string; lid?: string } | undefined): boolean {
  const u = user(jid);
  return u !== null && (u === user(me?.id) || u === user(me?.lid));
}

/** The members of a group a message went to: its participants, the account itself left out. */
export function groupMemberCount(
  group: { participants: { id: string; lid?: string | null; phoneNumber?: string | null }[] } | undefined,
  me: { id: string; lid?: string } | undefined,
): number | null {
  if (!group) return null;
  const own = new Set([user(me?.id), user(me?.lid)].filter((j): j is string => j !== null));
  return group.participants.filter((p) => !own.has(user(p.id)!) && !(p.lid && own.has(user(p.lid)!)) && !(p.phoneNumber && own.has(user(p.phoneNumber)!)))
    .length;
}
