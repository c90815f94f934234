/**
 * A peer a Telegram user account may address (docs/platforms.md, telegram_user, "Peers"): MTProto
 * names a user or a channel by its id and the access hash Telegram gave *this* account for it; a
 * basic group by its id alone. Pure: the chat id a campaign names, and what it names.
 */
export interface TelegramPeer {
  /** the chat id campaigns use: a user's id, `-{id}` a basic group, `-100{id}` a channel or supergroup */
  chatId: string;
  kind: 'user' | 'chat' | 'channel';
  /** a signed 64-bit integer as text; null for a basic group */
  accessHash: string | null;
  /** lower-case, without the @; null when it has none */
  username: string | null;
}

/** Where an account's peers are kept between processes (PostgreSQL: TelegramPeerRepository). */
export interface TelegramPeerStore {
  /** the peer of a chat id, or of a username (`@name` or `name`, any case) */
  find(accountId: string, chatIdOrUsername: string): Promise<TelegramPeer | null>;
  /** keeps what was learnt (a later learning of the same chat replaces the earlier) */
  save(accountId: string, peers: readonly TelegramPeer[], at: Date): Promise<void>;
}

/** What a target's chat id names: a marked numeric id (its kind and bare id), or a username. */
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

/** The chat id campaigns name a peer by (the marked id). */
export function telegramChatIdOf(kind: TelegramPeer['kind'], id: string): string {
  return kind === 'channel' ? `-100${id}` : kind === 'chat' ? `-${id}` : id;
}
