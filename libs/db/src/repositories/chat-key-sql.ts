import { sql, type RawBuilder } from 'kysely';

/**
 * A chat id as the account's platform compares it (libs/core chatKey, migrations/0044 chat_key):
 * telegram_user by its key, any other platform as it is (the same SQL as before, so its plans keep their indexes).
 */
export function chatKeySql(platform: string, chat: RawBuilder<unknown>): RawBuilder<unknown> {
  return platform === 'telegram_user' ? sql`chat_key('telegram_user', ${chat})` : chat;
}
