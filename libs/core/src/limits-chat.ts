import { limit } from './limit-entry.js';
import { NEW_CHAT_HOLD_CODES } from './new-chat-limits.js';

// The limits that hold one chat, its target kept pending with the limit's code until it frees.

/** The transports' `chat-wait` codes: the HTTP platform's slow mode, Telegram's per-group flood wait. */
export const CHAT_WAIT_CODES: readonly string[] = ['slow_mode', 'chat_flood_wait'];

export const SLOW_MODE = limit({
  key: 'slow_mode',
  waiting: 'slow_mode',
  gate: 'chat',
  phase: null,
  hold: { codes: CHAT_WAIT_CODES, sentence: (held) => `${held} by the chats' slow mode.` },
});

/** WhatsApp's holds on new chats (new-chat-limits.ts), held in PostgreSQL, met by the transport. */
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
