import type { CannotSendReason, ChatKind, DirectoryChat } from '@metronome/core';

// The chats a bot's updates show (a bot cannot list its chats): https://core.telegram.org/bots/api#update

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

function chatOf(chat: Json | null): Pick<DirectoryChat, 'chatId' | 'kind' | 'title'> | null {
  const id = chat?.['id'];
  if (!chat || (typeof id !== 'number' && typeof id !== 'string')) return null;
  const type = chat['type'];
  const kind: ChatKind = type === 'private' ? 'direct' : type === 'channel' ? 'channel' : 'group';
  const name = [str(chat['first_name']), str(chat['last_name'])].filter(Boolean).join(' ');
  const username = str(chat['username']);
  const title = str(chat['title']) ?? (name || (username ? `@${username}` : null));
  return { chatId: String(id), kind, title };
}

function membership(kind: ChatKind, member: Json | null): { canSend: boolean; cannotSendReason: CannotSendReason | null } {
  const yes = { canSend: true, cannotSendReason: null };
  switch (member?.['status']) {
    case 'creator':
      return yes;
    case 'administrator':
      return kind === 'channel' && member['can_post_messages'] === false ? { canSend: false, cannotSendReason: 'forbidden' } : yes;
    case 'member':
      // Only administrators post in a channel.
      return kind === 'channel' ? { canSend: false, cannotSendReason: 'forbidden' } : yes;
    case 'restricted':
      if (member['is_member'] === false) return { canSend: false, cannotSendReason: 'left' };
      return member['can_send_messages'] === false ? { canSend: false, cannotSendReason: 'forbidden' } : yes;
    case 'left':
      return { canSend: false, cannotSendReason: 'left' };
    case 'kicked':
      // In a private chat, "kicked" is the person blocking the bot.
      return { canSend: false, cannotSendReason: kind === 'direct' ? 'blocked' : 'removed' };
    default:
      return yes;
  }
}

/** The chats a batch names, latest news last: `my_chat_member` decides whether the bot may post; a migrated group's old id is unknown. */
export function chatsFromUpdates(updates: readonly unknown[]): DirectoryChat[] {
  const chats = new Map<string, DirectoryChat>();
  const put = (chat: Pick<DirectoryChat, 'chatId' | 'kind' | 'title'>, send: Pick<DirectoryChat, 'canSend' | 'cannotSendReason'> | null) => {
    const was = chats.get(chat.chatId);
    chats.delete(chat.chatId);
    chats.set(chat.chatId, {
      ...chat,
      title: chat.title ?? was?.title ?? null,
      memberCount: null,
      ...(send ?? (was ? { canSend: was.canSend, cannotSendReason: was.cannotSendReason } : { canSend: true, cannotSendReason: null })),
    });
  };
  for (const raw of updates) {
    const update = obj(raw);
    if (!update) continue;
    const member = obj(update['my_chat_member']);
    if (member) {
      const chat = chatOf(obj(member['chat']));
      if (chat) put(chat, membership(chat.kind, obj(member['new_chat_member'])));
      continue;
    }
    const message = obj(update['message']) ?? obj(update['channel_post']);
    const chat = chatOf(obj(message?.['chat']));
    if (!message || !chat) continue;
    const movedTo = message['migrate_to_chat_id'];
    if (typeof movedTo === 'number' || typeof movedTo === 'string') put(chat, { canSend: false, cannotSendReason: 'not_found' });
    else put(chat, null);
  }
  return [...chats.values()];
}
