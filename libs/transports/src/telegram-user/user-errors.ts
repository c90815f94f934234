import { ACCOUNT_FROZEN, ACCOUNT_RESTRICTED, ACCOUNT_SPAM_LIMITED, MEDIA_REF_INVALID, type SendResult } from '@metronome/core';
import { errors } from 'telegram';

/** The chat will not take the account's messages: the chat fails with the code, lower-cased. */
const CHAT_REFUSALS = new Set(['CHAT_WRITE_FORBIDDEN', 'CHANNEL_PRIVATE', 'CHAT_ADMIN_REQUIRED', 'CHAT_RESTRICTED', 'USER_IS_BLOCKED', 'YOU_BLOCKED_USER']);
/** One kind of message refused in a chat that takes others: the part fails; the chat is neither suppressed nor marked. */
const KIND_REFUSALS = new Set([
  'CHAT_SEND_PLAIN_FORBIDDEN',
  'CHAT_SEND_MEDIA_FORBIDDEN',
  'CHAT_SEND_PHOTOS_FORBIDDEN',
  'CHAT_SEND_VIDEOS_FORBIDDEN',
  'CHAT_SEND_DOCS_FORBIDDEN',
  'CHAT_SEND_AUDIOS_FORBIDDEN',
  'CHAT_SEND_VOICES_FORBIDDEN',
  'CHAT_SEND_GIFS_FORBIDDEN',
  'CHAT_SEND_STICKERS_FORBIDDEN',
  'CHAT_SEND_POLL_FORBIDDEN',
]);
/** A forum topic that takes no posts now: the target fails; the chat stays (its other topics may take them). */
const TOPIC_REFUSALS = new Set(['TOPIC_CLOSED', 'TOPIC_DELETED']);
const NOT_FOUND = new Set(['PEER_ID_INVALID', 'USERNAME_NOT_OCCUPIED', 'USERNAME_INVALID', 'CHANNEL_INVALID', 'CHAT_ID_INVALID', 'INPUT_USER_DEACTIVATED']);
/** The session no longer signs the account in: it must sign in again. */
const SIGNED_OUT = new Set([
  'AUTH_KEY_UNREGISTERED',
  'SESSION_REVOKED',
  'SESSION_EXPIRED',
  'AUTH_KEY_INVALID',
  'AUTH_KEY_PERM_EMPTY',
  'USER_DEACTIVATED',
  'USER_DEACTIVATED_BAN',
  // the key was used from two places at once: Telegram revokes it
  'AUTH_KEY_DUPLICATED',
]);
/** A kept media reference Telegram no longer takes: forgotten, and the media uploaded again. */
const MEDIA_GONE = new Set(['FILE_REFERENCE_EXPIRED', 'FILE_REFERENCE_INVALID', 'MEDIA_EMPTY', 'PHOTO_INVALID', 'DOCUMENT_INVALID']);

export const PEER_FLOOD_MESSAGE =
  'Telegram limited this account for spam (PEER_FLOOD): it may not write to people who have not written to it. Ask @SpamBot in the Telegram app when the limit ends, then lift the restriction and resume.';

/** Telegram limited the account in every group and channel (USER_BANNED_IN_CHANNEL): it is the account, not the chat. */
export const SPAM_LIMITED_MESSAGE =
  'Telegram limited this account for spam in groups and channels (USER_BANNED_IN_CHANNEL): it may not post in any of them. Ask @SpamBot in the Telegram app when the limit ends, then lift the restriction and resume.';

export const FROZEN_MESSAGE =
  'Telegram froze this account (FROZEN_METHOD_INVALID): it may not send anything. Appeal in the Telegram app (or to @SpamBot); once Telegram lifts the freeze, lift the restriction and resume.';

export const USER_RESTRICTED_MESSAGE =
  'Telegram restricted this account after spam reports (USER_RESTRICTED). Ask @SpamBot in the Telegram app when it ends, then lift the restriction and resume.';

/**
 * Classifies what GramJS threw at a send (docs/platforms.md): `errorMessage` is Telegram's code, never prose. Anything else is a
 * lost connection after the request may have left: `ambiguous`, which the random_id lets the sender settle by sending again.
 */
export function classifyUserError(error: unknown): SendResult {
  if (error instanceof errors.FloodWaitError) return { kind: 'account-wait', retryAfterMs: waitMs(error.seconds), code: 'flood_wait' };
  if (error instanceof errors.FloodTestPhoneWaitError) return { kind: 'account-wait', retryAfterMs: waitMs(error.seconds), code: 'flood_wait' };
  if (error instanceof errors.SlowModeWaitError) return { kind: 'chat-wait', retryAfterMs: waitMs(error.seconds), code: 'slowmode_wait' };
  if (!(error instanceof errors.RPCError)) {
    return {
      kind: 'ambiguous',
      code: 'connection_lost',
      message: `Telegram's connection failed during the send: ${String((error as Error)?.message ?? error).slice(0, 200)}`,
    };
  }
  const code = error.errorMessage;
  const message = `Telegram answered ${error.code ?? ''} ${code}`.replace('  ', ' ');
  // Still processing the first send with this random_id: a later repeat is answered with its messages, never posted twice.
  if (code === 'RANDOM_ID_DUPLICATE') return { kind: 'retriable', code: 'random_id_in_processing', message };
  if (code === 'PEER_FLOOD') return { kind: 'account-unavailable', code: ACCOUNT_RESTRICTED, message: PEER_FLOOD_MESSAGE };
  // Account-level answers: they stop the account, whatever the chat; no chat is suppressed for them.
  if (code === 'USER_BANNED_IN_CHANNEL') return { kind: 'account-unavailable', code: ACCOUNT_SPAM_LIMITED, message: SPAM_LIMITED_MESSAGE };
  if (code.startsWith('FROZEN_')) return { kind: 'account-unavailable', code: ACCOUNT_FROZEN, message: FROZEN_MESSAGE };
  if (code === 'USER_RESTRICTED') return { kind: 'account-unavailable', code: ACCOUNT_RESTRICTED, message: USER_RESTRICTED_MESSAGE };
  if (SIGNED_OUT.has(code) || error.code === 401) return { kind: 'account-unavailable', code: code.toLowerCase(), message };
  if (CHAT_REFUSALS.has(code) || KIND_REFUSALS.has(code) || TOPIC_REFUSALS.has(code)) return { kind: 'rejected', code: code.toLowerCase(), message };
  if (NOT_FOUND.has(code)) return { kind: 'rejected', code: 'chat_not_found', message };
  if (MEDIA_GONE.has(code)) return { kind: 'rejected', code: MEDIA_REF_INVALID, message };
  if (code === 'MESSAGE_TOO_LONG' || code === 'MEDIA_CAPTION_TOO_LONG') return { kind: 'rejected', code: 'message_too_long', message };
  // 5xx and -503 (timeout): Telegram answered, so nothing was posted; the same random_id goes again.
  if (error.code === undefined || error.code >= 500 || error.code < 0) return { kind: 'retriable', code: code.toLowerCase() || 'server_error', message };
  if (error.code === 403) return { kind: 'rejected', code: 'forbidden', message };
  return { kind: 'rejected', code: 'invalid_request', message };
}

function waitMs(seconds: number): number {
  return Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds * 1000) : 1_000;
}

export function telegramRefusalOf(error: unknown): { code: string; seconds: number | null } | null {
  if (error instanceof errors.FloodWaitError) return { code: 'FLOOD_WAIT', seconds: error.seconds };
  if (error instanceof errors.RPCError) return { code: error.errorMessage, seconds: null };
  return null;
}
