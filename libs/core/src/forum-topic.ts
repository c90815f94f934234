// Forum topics (CONTRACT §3, threadId): a Telegram target may name a topic; the same chat in two topics is two targets; 0 stores "no topic".

export const TOPIC_PLATFORMS: readonly string[] = ['telegram', 'telegram_user'];

/** Telegram's message ids are 32-bit. */
export const MAX_THREAD_ID = 2_147_483_647;

/** A target's key as one text: the chat id, or `chatId` U+001F `threadId` for a topic (no chat id holds a control character); migrations/0039 agrees. */
export function targetKey(chatId: string, threadId?: number | null): string {
  return threadId ? `${chatId}\u001f${threadId}` : chatId;
}

export function targetInWords(chatId: string, threadId?: number | null): string {
  return threadId ? `${chatId} (topic ${threadId})` : chatId;
}
