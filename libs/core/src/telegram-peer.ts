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

/** The username a chat id names (`@name` or `name`, a letter then 3–31 of a–z, 0–9, _, any case), lower-cased without the @; else null. */
export function telegramUsernameOf(chatId: string): string | null {
  const name = /^@?([A-Za-z][A-Za-z0-9_]{3,31})$/.exec(chatId)?.[1];
  return name === undefined ? null : name.toLowerCase();
}

/** The address a chat id names; null when it is neither a marked id nor a username Telegram allows. */
export function telegramAddressOf(chatId: string): TelegramAddress | null {
  if (/^-100\d+$/.test(chatId)) return { kind: 'channel', id: chatId.slice(4) };
  if (/^-\d+$/.test(chatId)) return { kind: 'chat', id: chatId.slice(1) };
  if (/^\d+$/.test(chatId)) return { kind: 'user', id: chatId };
  const username = telegramUsernameOf(chatId);
  return username === null ? null : { kind: 'username', username };
}

export function telegramChatIdOf(kind: TelegramPeer['kind'], id: string): string {
  return kind === 'channel' ? `-100${id}` : kind === 'chat' ? `-${id}` : id;
}
