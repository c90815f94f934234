// What the fake platform remembers of each account and chat (state.ts decides on it).
import type { BanRules } from './ban-model.js';
import { freshPace, type PaceState } from './limits.js';
import type { ChatErrorCode, ReceivedMessage, RejectReason } from './platform-types.js';

export interface ChatState {
  account: string;
  chatId: string;
  error: ChatErrorCode | null;
  slowModeSeconds: number | null;
  failNext: number;
  hangNextMs: number;
  lastAcceptedAt: number | null;
  messages: ReceivedMessage[];
}

export interface AccountState {
  account: string;
  maxPerMinute: number | null;
  burst: number | null;
  slowModeSeconds: number | null;
  unauthorized: boolean;
  /** the account's own hidden limits; null fields fall back to the sandbox's config */
  ban: { [K in keyof BanRules]: number | null };
  /** why the ban model closed the account, and when; null while it never broke a hidden limit */
  banned: { at: number; reason: string } | null;
  pendingFloodWaitSeconds: number | null;
  blockedUntil: number;
  pace: PaceState;
  sendTimes: number[];
  /** Idempotency-Key → messageId, for accepted sends only (a retry after a reject is not a duplicate). */
  keys: Map<string, string>;
  /** a repeated key is answered as the first time, nothing delivered again (default); false: delivered again, a real duplicate */
  deduplicates: boolean;
  uploads: Map<string, number>;
  chats: Map<string, ChatState>;
}

export const chatErrorStatus: Record<ChatErrorCode, 400 | 403 | 404> = {
  chat_not_found: 404,
  forbidden: 403,
  message_invalid: 400,
};

export const emptyRejected = (): Record<RejectReason, number> => ({
  flood_wait: 0,
  slow_mode: 0,
  unauthorized: 0,
  banned: 0,
  fault: 0,
  invalid: 0,
  chat_error: 0,
});

export function newAccountState(account: string): AccountState {
  return {
    account,
    maxPerMinute: null,
    burst: null,
    slowModeSeconds: null,
    unauthorized: false,
    ban: { banHourlyCap: null, banDailyCap: null, banMinGapMs: null },
    banned: null,
    pendingFloodWaitSeconds: null,
    blockedUntil: 0,
    pace: freshPace(),
    sendTimes: [],
    keys: new Map(),
    deduplicates: true,
    uploads: new Map(),
    chats: new Map(),
  };
}

export function newChatState(account: string, chatId: string): ChatState {
  return { account, chatId, error: null, slowModeSeconds: null, failNext: 0, hangNextMs: 0, lastAcceptedAt: null, messages: [] };
}
