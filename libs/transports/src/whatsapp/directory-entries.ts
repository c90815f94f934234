import type { DirectoryChat } from '@metronome/core';
import { jidNormalizedUser, type GroupMetadata, type GroupParticipant } from '@whiskeysockets/baileys';

export function ownIds(user: { id: string; lid?: string } | undefined): Set<string> {
  const ids = new Set<string>();
  for (const jid of [user?.id, user?.lid]) {
    const normal = jid ? jidNormalizedUser(jid) : '';
    if (normal) ids.add(normal);
  }
  return ids;
}

export function isOwn(p: Pick<GroupParticipant, 'id' | 'phoneNumber' | 'lid'> | string | undefined | null, own: Set<string>): boolean {
  if (!p) return false;
  const jids = typeof p === 'string' ? [p] : [p.id, p.phoneNumber, p.lid];
  return jids.some((jid) => typeof jid === 'string' && jid !== '' && own.has(jidNormalizedUser(jid)));
}

export interface GroupStanding {
  announce: boolean;
  admin: boolean;
  member: boolean;
}

export function sendingOf(g: GroupStanding, notMember: 'left' | 'removed' = 'left'): Pick<DirectoryChat, 'canSend' | 'cannotSendReason'> {
  if (!g.member) return { canSend: false, cannotSendReason: notMember };
  if (g.announce && !g.admin) return { canSend: false, cannotSendReason: 'announce_only' };
  return { canSend: true, cannotSendReason: null };
}

export function groupEntry(meta: GroupMetadata, own: Set<string>): { chat: DirectoryChat; standing: GroupStanding } {
  const self = (meta.participants ?? []).find((p) => isOwn(p, own));
  // A listing holds only the account's groups, so a participant list without a matching id still means a member.
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

/** The phone-number JID when WhatsApp gave one, else the LID JID. */
export function directChatId(remoteJid: string | null | undefined, remoteJidAlt?: string | null): string | null {
  const pick = [remoteJid, remoteJidAlt].find((j) => j?.endsWith('@s.whatsapp.net')) ?? [remoteJid, remoteJidAlt].find((j) => j?.endsWith('@lid'));
  const normal = pick ? jidNormalizedUser(pick) : '';
  return normal || null;
}
