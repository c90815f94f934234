import { telegramUsernameOf } from './telegram-peer.js';

/**
 * What a chat id is compared and listed by on its account's platform (suppressions, opt-outs, replies).
 * telegram_user: a username in any case, with or without the @, is `@` and lower case, as Telegram
 * reads it. Anything else (marked ids, other platforms, WhatsApp JIDs) as given.
 * migrations/0044 `chat_key` is the same rule in SQL.
 */
export function chatKey(platform: string, chatId: string): string {
  if (platform !== 'telegram_user') return chatId;
  const username = telegramUsernameOf(chatId);
  return username === null ? chatId : `@${username}`;
}
