import type { SendFailure } from '@metronome/core';

/** An unsuccessful Bot API answer; `written`: the whole request had been sent when it came. */
export interface BotApiError {
  status: number;
  description: string | null;
  parameters: { retry_after?: unknown; migrate_to_chat_id?: unknown } | null;
  written: boolean;
}

/**
 * Permanent per-chat problems by Telegram's `description`, the only way the Bot API tells them apart: every match on its text
 * lives in this table. Case-insensitive substring, first row first; `status` narrows a row.
 */
export const CHAT_ERROR_DESCRIPTIONS: ReadonlyArray<{ contains: string; status?: number; code: string }> = [
  { contains: 'bot was kicked', status: 403, code: 'bot_kicked' },
  { contains: 'bot was blocked', status: 403, code: 'bot_blocked' },
  { contains: 'user is deactivated', status: 403, code: 'user_deactivated' },
  { contains: 'bot is not a member', status: 403, code: 'bot_not_member' },
  // the user never wrote to the bot
  { contains: "bot can't initiate conversation", status: 403, code: 'bot_cannot_initiate' },
  { contains: "bot can't send messages to bots", status: 403, code: 'chat_is_bot' },
  // also "Bad Request: group chat was deactivated"
  { contains: 'chat was deleted', code: 'chat_deleted' },
  { contains: 'chat was deactivated', code: 'chat_deleted' },
  { contains: 'chat not found', code: 'chat_not_found' },
  // also "have no rights to send a message", "need administrator rights in the channel chat", "CHAT_WRITE_FORBIDDEN"
  { contains: 'not enough rights', code: 'no_rights' },
  { contains: 'have no rights', code: 'no_rights' },
  { contains: 'need administrator rights', code: 'no_rights' },
  { contains: 'chat_write_forbidden', code: 'no_rights' },
  // a file_id of another bot
  { contains: 'wrong file identifier', code: 'media_ref_invalid' },
  { contains: 'wrong remote file identifier', code: 'media_ref_invalid' },
  // a file_id sent with another kind's method: forgotten, and the media uploaded again
  { contains: "can't use file of type", code: 'media_ref_invalid' },
  // an image Telegram cannot read as a photo (not JPEG/PNG/WebP), or sides too far apart or too large
  { contains: 'image_process_failed', code: 'image_invalid' },
  { contains: 'photo_invalid_dimensions', code: 'image_invalid' },
  { contains: 'too big for a photo', code: 'photo_too_large' },
  { contains: 'message is too long', code: 'message_too_long' },
  { contains: 'caption is too long', code: 'message_too_long' },
];

/** Telegram's per-group limit is ~20 a minute, so a longer retry_after can only be the bot-wide flood control. */
const MAX_CHAT_WAIT_MS = 60_000;
const DEFAULT_WAIT_MS = 5_000;

/** A private chat's id is a user's id: a positive integer. Groups and channels are negative or `@name`. */
export function isPrivateChat(chatId: string): boolean {
  return /^[1-9]\d*$/.test(chatId);
}

/**
 * Classifies an unsuccessful answer to a send to `chatId` (docs/platforms.md). A 429 does not say which limit was hit; the
 * sender already paces chats at 20/min, so in a private chat it is the bot-wide one (`account-wait`), in a group its own
 * (`chat-wait`) unless retry_after exceeds a minute. Too broad a wait only delays; too narrow earns ever longer waits.
 */
export function classifyBotApiError(error: BotApiError, chatId: string): SendFailure {
  const { status } = error;
  const description = (error.description ?? '').slice(0, 300);
  const message = description ? `Telegram answered ${status}: ${description}` : `Telegram answered ${status}`;
  const migrateTo = error.parameters?.migrate_to_chat_id;
  if ((typeof migrateTo === 'number' && Number.isSafeInteger(migrateTo)) || (typeof migrateTo === 'string' && /^-?\d+$/.test(migrateTo))) {
    return { kind: 'chat-moved', newChatId: String(migrateTo), code: 'chat_migrated', message };
  }
  if (status === 429) {
    const seconds = Number(error.parameters?.retry_after);
    const retryAfterMs = Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds * 1000) : DEFAULT_WAIT_MS;
    if (!isPrivateChat(chatId) && retryAfterMs <= MAX_CHAT_WAIT_MS) return { kind: 'chat-wait', retryAfterMs, code: 'chat_flood_wait' };
    return { kind: 'account-wait', retryAfterMs, code: 'flood_wait' };
  }
  // 401: the token was revoked; 404: malformed (no bot at that path). Nothing can be sent until it is fixed.
  if (status === 401) return { kind: 'account-unavailable', code: 'account_unauthorized', message };
  if (status === 404) return { kind: 'account-unavailable', code: 'bot_token_invalid', message };
  // A 5xx to a request received whole may come after the message was posted: ambiguous. Before it was all sent: retried.
  if (status >= 500 && error.written) return { kind: 'ambiguous', code: `http_${status}`, message };
  if (status >= 500 || status === 408) return { kind: 'retriable', code: `http_${status}`, message };
  const lower = description.toLowerCase();
  const row = CHAT_ERROR_DESCRIPTIONS.find((r) => (r.status === undefined || r.status === status) && lower.includes(r.contains));
  if (row) return { kind: 'rejected', code: row.code, message };
  if (status === 403) return { kind: 'rejected', code: 'forbidden', message };
  return { kind: 'rejected', code: 'invalid_request', message };
}
