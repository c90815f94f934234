import { limit } from './limit-entry.js';
import { NEW_CHAT_HOLD_CODES } from './new-chat-limits.js';

// The limits that hold one chat, its target kept pending with the limit's code until it frees.

/**
 * Error codes the transports give a `chat-wait` (only that chat waits): the HTTP platform's
 * `slow_mode` and Telegram's per-group `chat_flood_wait`. Kept in step with libs/transports.
 */
export const CHAT_WAIT_CODES: readonly string[] = ['slow_mode', 'chat_flood_wait'];

/** A chat's slow mode, or a platform's wait on one group. */
export const SLOW_MODE = limit({
  key: 'slow_mode',
  waiting: 'slow_mode',
  gate: 'chat',
  phase: null,
  hold: { codes: CHAT_WAIT_CODES, sentence: (held) => `${held} by the chats' slow mode.` },
});

/**
 * WhatsApp's holds on new chats (new-chat-limits.ts: a 463, the reach-out time lock, the
 * new-chat cap), held in PostgreSQL and met by the transport before a send.
 */
export const NEW_CHAT_LIMIT = limit({
  key: 'new_chat_limit',
  waiting: 'new_chat_limit',
  gate: 'chat',
  phase: null,
  hold: {
    codes: NEW_CHAT_HOLD_CODES,
    sentence: (held, f) => {
      const hold = f.account?.newChatHold;
      if (!hold) return `${held}: new chats the platform held; they are tried again then.`;
      return hold.until ? `${held}. ${hold.words}` : `${held.replace(/ (until|from) .*$/, '')}. ${hold.words}`;
    },
  },
});
