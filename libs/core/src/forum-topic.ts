// Forum topics (docs/CONTRACT.md §3, campaigns: threadId): a Telegram target may name a topic of
// its chat. The same chat in two topics is two targets; 0 stands for "no topic" where a number
// must be stored (migrations/0039).

/** The platforms whose targets may name a forum topic (Telegram's message_thread_id). */
export const TOPIC_PLATFORMS: readonly string[] = ['telegram', 'telegram_user'];

/** The largest topic id taken: Telegram's message ids are 32-bit. */
export const MAX_THREAD_ID = 2_147_483_647;

/**
 * A target's key where one text names it (a run's, a campaign's or an audience's): the chat id,
 * or for a topic the chat id, U+001F and the topic (no chat id holds a control character).
 * migrations/0039 computes the same in SQL.
 */
export function targetKey(chatId: string, threadId?: number | null): string {
  return threadId ? `${chatId}\u001f${threadId}` : chatId;
}

/** A target as a person reads it: the chat id, with "topic N" for a topic. */
export function targetInWords(chatId: string, threadId?: number | null): string {
  return threadId ? `${chatId} (topic ${threadId})` : chatId;
}
