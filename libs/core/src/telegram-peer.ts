/** A peer a Telegram user account may address (docs/platforms.md, "Peers"): a user or channel by id and the access hash Telegram gave this account. */
export interface TelegramPeer {
  /** a user's id, `-{id}` a basic group, `-100{id}` a channel or supergroup */
  chatId: string;
  kind: 'user' | 'chat' | 'channel';
  accessHash: string | null;
  username: string | null;
}

export interface TelegramPeerStore {
  find(accountId: string, chatIdOrUsername: string): Promise<TelegramPeer | null>;
  save(accountId: string, peers: readonly TelegramPeer[], at: Date): Promise<void>;
}

export type TelegramAddress = { kind: 'user' | 'chat' | 'channel'; id: string } | { kind: 'username'; username: string };

/** The address a chat id names; null when it is neither a marked id nor a username Telegram allows (5–32 of a–z, 0–9, _). */
export function telegramAddressOf(chatId: string): TelegramAddress | null {
  if (/^-100\d+$/.test(chatId)) return { kind: 'channel', id: chatId.slice(4) };
  if (/^-\d+$/.test(chatId)) return { kind: 'chat', id: chatId.slice(1) };
  if (/^\d+$/.test(chatId)) return { kind: 'user', id: chatId };
  const name = chatId.replace(/^@/, '').toLowerCase();
  if (/^[a-z][a-z0-9_]{3,31}$/.test(name)) return { kind: 'username', username: name };
  return null;
}

export function telegramChatIdOf(kind: TelegramPeer['kind'], id: string): string {
  return kind === 'channel' ? `-100${id}` : kind === 'chat' ? `-${id}` : id;
}
