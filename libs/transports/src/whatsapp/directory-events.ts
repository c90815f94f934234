import type { GroupMetadata, WAMessage } from '@whiskeysockets/baileys';
import { directChatId, groupEntry, isOwn, ownIds, sendingOf, type GroupStanding } from './directory-entries.js';
import type { WhatsAppDirectory } from './directory-sync.js';
import { phoneJidOf, type LidMapping } from './lid-identity.js';
import type { WhatsAppSocketEvents } from './socket.js';

type On = <E extends keyof WhatsAppSocketEvents>(event: E, listener: (arg: WhatsAppSocketEvents[E]) => void) => void;

/** Keeps an account's directory current from its socket's group and message events, without another listing. */
export function followDirectory(
  on: On,
  accountId: string,
  user: () => { id: string; lid?: string } | undefined,
  dir: WhatsAppDirectory,
  lids: () => LidMapping | undefined = () => undefined,
): void {
  const entries = (metas: GroupMetadata[]) => {
    const own = ownIds(user());
    return metas.map((meta) => {
      const { chat, standing } = groupEntry(meta, own);
      dir.setStanding(accountId, chat.chatId, standing);
      return chat;
    });
  };

  const joined = async (jid: string) => {
    try {
      dir.upsert(accountId, entries([await dir.lookup(accountId, jid)]));
    } catch {
      // The lookup failed (rate-overlimit, the socket closed): the next listing has the group.
    }
  };

  const restand = (jid: string, change: Partial<GroupStanding>) => {
    const was = dir.standing(accountId, jid);
    if (!was) return void joined(jid);
    const now = { ...was, ...change };
    dir.setStanding(accountId, jid, now);
    const after = sendingOf(now);
    if (now.member && sendingOf(was).canSend !== after.canSend) dir.patch(accountId, jid, after);
  };

  on('groups.upsert', (metas) => dir.upsert(accountId, entries(metas)));

  on('groups.update', (updates) => {
    // Full metadata is Baileys' own listing (also when the server marks groups dirty); ours writes them itself.
    const full = updates.filter((u): u is GroupMetadata => typeof u.id === 'string' && Array.isArray(u.participants));
    if (full.length > 0 && !dir.isListing(accountId)) dir.upsert(accountId, entries(full));
    for (const u of updates) {
      if (!u.id || Array.isArray(u.participants)) continue;
      if (typeof u.subject === 'string') dir.patch(accountId, u.id, { title: u.subject || null });
      if (typeof u.announce === 'boolean') restand(u.id, { announce: u.announce });
    }
  });

  on('group-participants.update', (u) => {
    const own = ownIds(user());
    if (!(u.participants ?? []).some((p) => isOwn(p, own))) return;
    switch (u.action) {
      case 'remove': {
        // Baileys reports a member leaving as a `remove` whose author is that member.
        const left = isOwn(u.author, own) || isOwn(u.authorPn, own);
        const was = dir.standing(accountId, u.id);
        if (was) dir.setStanding(accountId, u.id, { ...was, member: false });
        dir.patch(accountId, u.id, sendingOf({ announce: false, admin: false, member: false }, left ? 'left' : 'removed'));
        return;
      }
      case 'add':
        void joined(u.id);
        return;
      case 'promote':
      case 'demote':
        restand(u.id, { admin: u.action === 'promote' });
        return;
      default:
        return;
    }
  });

  on('messages.upsert', ({ messages }) => {
    for (const m of messages) void direct(accountId, m, dir, lids());
  });
}

async function direct(accountId: string, m: WAMessage, dir: WhatsAppDirectory, lids: LidMapping | undefined): Promise<void> {
  const named = directChatId(m.key?.remoteJid, m.key?.remoteJidAlt);
  if (!named) return;
  const chatId = await phoneJidOf(named, lids);
  const title = !m.key?.fromMe && typeof m.pushName === 'string' && m.pushName.trim() !== '' ? m.pushName.trim() : null;
  dir.direct(accountId, chatId, title);
}
