import type { DirectoryChat } from '@metronome/core';
import { jidNormalizedUser, type GroupMetadata, type GroupParticipant } from '@whiskeysockets/baileys';

// What the chat directory knows of a WhatsApp group, read from Baileys' group metadata. Pure.

/** The account's own ids as Baileys may address it: its phone-number JID and its LID, without device. */
export function ownIds(user: { id: string; lid?: string } | undefined): Set<string> {
  const ids = new Set<string>();
  for (const jid of [user?.id, user?.lid]) {
    const normal = jid ? jidNormalizedUser(jid) : '';
    if (normal) ids.add(normal);
  }
  return ids;
}

/** Whether a participant (by its id, phone number or LID, whichever WhatsApp gave) is the account. */
export function isOwn(p: Pick<GroupParticipant, 'id' | 'phoneNumber' | 'lid'> | string | undefined | null, own: Set<string>): boolean {
  if (!p) return false;
  const jids = typeof p === 'string' ? [p] : [p.id, p.phoneNumber, p.lid];
  return jids.some((jid) => typeof jid === 'string' && jid !== '' && own.has(jidNormalizedUser(jid)));
}

/** What decides whether the account may post in a group. */
export interface GroupStanding {
  /** only admins may post */
  announce: boolean;
  admin: boolean;
  /** the account is a member (false once it left or was removed) */
  member: boolean;
}

/** Whether the account may post, and why not. */
export function sendingOf(g: GroupStanding, notMember: 'left' | 'removed' = 'left'): Pick<DirectoryChat, 'canSend' | 'cannotSendReason'> {
  if (!g.member) return { canSend: false, cannotSendReason: notMember };
  if (g.announce && !g.admin) return { canSend: false, cannotSendReason: 'announce_only' };
  return { canSend: true, cannotSendReason: null };
}

/** A group from its full metadata (a listing, a group the account was put in): its entry and the account's standing. */
export function groupEntry(meta: GroupMetadata, own: Set<string>): { chat: DirectoryChat; standing: GroupStanding } {
  const self = (meta.participants ?? []).find((p) => isOwn(p, own));
  // The listing holds only groups the account is in, so a participant list without the
  // account (an id form we cannot match) still means a member: do not call it removed.
  const standing: GroupStanding = {
    announce: meta.announce === true,
    admin: self?.admin === 'admin' || self?.admin === 'superadmin' || self?.isAdmin === true || self?.isSuperAdmin === true,
    member: true,
  };
  const chat: DirectoryChat = {
    chatId: meta.id,
    title: typeof meta.subject === 'string' && meta.subject !== '' ? meta.subject : null,
    kind: 'group',
    memberCount: Array.isArray(meta.participants) ? meta.participants.length : (meta.size ?? null),
    ...sendingOf(standing),
  };
  return { chat, standing };
}

/** A one-to-one chat's id as the directory keeps it: the phone-number JID when WhatsApp gave one, else the LID JID. */
export function directChatId(remoteJid: string | null | undefined, remoteJidAlt?: string | null): string | null {
  const pick = [remoteJid, remoteJidAlt].find((j) => j?.endsWith('@s.whatsapp.net')) ?? [remoteJid, remoteJidAlt].find((j) => j?.endsWith('@lid'));
  const normal = pick ? jidNormalizedUser(pick) : '';
  return normal || null;
}
