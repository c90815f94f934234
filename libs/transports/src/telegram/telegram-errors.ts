import type { SendFailure } from '@metronome/core';

/**
 * An unsuccessful Bot API answer: the HTTP status and the fields of `{ok: false, ...}`.
 * `written`: the whole request had been sent when it came (bot-api-client.ts).
 */
export interface BotApiError {
  status: number;
  description: string | null;
  parameters: { retry_after?: unknown; migrate_to_chat_id?: unknown } | null;
  written: boolean;
}

/**
 * Telegram's descriptions that name a permanent problem with one chat, and the code a target
 * fails with. The Bot API gives no machine-readable error code besides the HTTP status, so its
 * `description` is the only way to tell "bot kicked" from "chat not found": every match on
 * description text lives in this one table, and nowhere else. Matched case-insensitively as a
 * substring, first row first; `status` narrows a row to one HTTP status.
 */
export const CHAT_ERROR_DESCRIPTIONS: ReadonlyArray<{ contains: string; status?: number; code: string }> = [
  // "Forbidden: bot was kicked from the group chat" (also supergroup / channel chat)
  { contains: 'bot was kicked', status: 403, code: 'bot_kicked' },
  // "Forbidden: bot was blocked by the user" (a private chat)
  { contains: 'bot was blocked', status: 403, code: 'bot_blocked' },
  // "Forbidden: user is deactivated" (a deleted account)
  { contains: 'user is deactivated', status: 403, code: 'user_deactivated' },
  // "Forbidden: bot is not a member of the channel chat" (also supergroup chat)
  { contains: 'bot is not a member', status: 403, code: 'bot_not_member' },
  // "Forbidden: bot can't initiate conversation with a user" (the user never wrote to the bot)
  { contains: "bot can't initiate conversation", status: 403, code: 'bot_cannot_initiate' },
  // "Forbidden: bot can't send messages to bots"
  { contains: "bot can't send messages to bots", status: 403, code: 'chat_is_bot' },
  // "Forbidden: the group chat was deleted", "Bad Request: group chat was deactivated"
  { contains: 'chat was deleted', code: 'chat_deleted' },
  { contains: 'chat was deactivated', code: 'chat_deleted' },
  // "Bad Request: chat not found"
  { contains: 'chat not found', code: 'chat_not_found' },
  // "Bad Request: not enough rights to send text messages to the chat", "have no rights to send a
  // message", "need administrator rights in the channel chat", "CHAT_WRITE_FORBIDDEN"
  { contains: 'not enough rights', code: 'no_rights' },
  { contains: 'have no rights', code: 'no_rights' },
  { contains: 'need administrator rights', code: 'no_rights' },
  { contains: 'chat_write_forbidden', code: 'no_rights' },
  // "Bad Request: wrong file identifier/HTTP URL specified" (a file_id of another bot)
  { contains: 'wrong file identifier', code: 'media_ref_invalid' },
  { contains: 'wrong remote file identifier', code: 'media_ref_invalid' },
  // "Bad Request: can't use file of type Animation as Video": a file_id sent with another kind's
  // method (only a file_id kept without its kind can be); forgotten, and the media uploaded again
  { contains: "can't use file of type", code: 'media_ref_invalid' },
  // sendPhoto with an image Telegram cannot read as a photo (a format other than JPEG/PNG/WebP),
  // or whose sides are too far apart or too large: "Bad Request: IMAGE_PROCESS_FAILED",
  // "Bad Request: PHOTO_INVALID_DIMENSIONS"
  { contains: 'image_process_failed', code: 'image_invalid' },
  { contains: 'photo_invalid_dimensions', code: 'image_invalid' },
  // "Bad Request: file of size 11000000 bytes is too big for a photo; the maximum size is 10485760 bytes"
  { contains: 'too big for a photo', code: 'photo_too_large' },
  // "Bad Request: message is too long", "Bad Request: message caption is too long"
  { contains: 'message is too long', code: 'message_too_long' },
  { contains: 'caption is too long', code: 'message_too_long' },
];

/**
 * Telegram's per-group limit is about 20 messages a minute, so a wait it imposes for one group
 * never needs longer than a minute; a longer retry_after can only be the bot-wide flood control.
 */
const MAX_CHAT_WAIT_MS = 60_000;
/** retry_after missing from a 429 (never seen in practice): wait a little rather than hammer. */
const DEFAULT_WAIT_MS = 5_000;

/** A private chat's id is a user's id: a positive integer. Groups and channels are negative or `@name`. */
export function isPrivateChat(chatId: string): boolean {
  return /^[1-9]\d*$/.test(chatId);
}

/**
 * Classifies an unsuccessful Bot API answer to a send to `chatId` (pure; see docs/platforms.md).
 *
 * 429: Telegram answers it per method call without saying which limit was hit. The sender
 * already paces each chat at CHAT_MAX_SEND_PER_MINUTE_TELEGRAM (20/min, Telegram's group limit,
 * and far below the 1/s it allows in a private chat), so:
 * - a private chat cannot have hit its own limit: the 429 is the bot-wide one (~30 msgs/s),
 *   and the whole account waits (`account-wait`);
 * - a group or channel most likely hit its own ~20/min limit (shared with whatever else the bot
 *   sends there), and only that chat waits (`chat-wait`) — unless retry_after exceeds a minute,
 *   which no per-group limit needs, so the account waits.
 * Waiting too broadly only delays; waiting too narrowly keeps hitting the limit, which Telegram
 * answers with ever longer waits.
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
  // 401: the token was revoked; 404: the token is malformed (Telegram answers "Not Found" for a
  // path that names no bot). Nothing can be sent from this account until it is fixed.
  if (status === 401) return { kind: 'account-unavailable', code: 'account_unauthorized', message };
  if (status === 404) return { kind: 'account-unavailable', code: 'bot_token_invalid', message };
  // A 5xx to a request Telegram received whole may come after the message was posted (a gateway
  // timing out on a slow upload, a server failing after the send): ambiguous, never re-posted
  // blindly. Answered before the body was all sent, it cannot have been acted on: retried.
  if (status >= 500 && error.written) return { kind: 'ambiguous', code: `http_${status}`, message };
  if (status >= 500 || status === 408) return { kind: 'retriable', code: `http_${status}`, message };
  const lower = description.toLowerCase();
  const row = CHAT_ERROR_DESCRIPTIONS.find((r) => (r.status === undefined || r.status === status) && lower.includes(r.contains));
  if (row) return { kind: 'rejected', code: row.code, message };
  if (status === 403) return { kind: 'rejected', code: 'forbidden', message };
  // Any other 4xx: the request itself is wrong for this chat; resending it cannot succeed.
  return { kind: 'rejected', code: 'invalid_request', message };
}
