// What the fake platform receives and answers, shared by the state, the routes and tests.
import type { SandboxChat } from './directory.js';
import type { Limits } from './limits.js';

export type Part = { type: 'text'; text: string } | { type: 'media'; mediaRef: string; caption?: string | null | undefined };

export interface SendRequest {
  account: string;
  chatId: string;
  idempotencyKey: string;
  partIndex: number;
  partCount: number;
  part: Part;
}

export interface ReceivedMessage extends SendRequest {
  /** Global order of receipt, 1-based. */
  seq: number;
  messageId: string;
  receivedAt: number;
  /** How much earlier than `receivedAt` the request may have come (loop-watch.ts); 0 when the loop kept up. */
  stampSlackMs: number;
  /** When the answer was written (after latency and any hang); null while the request is in flight. */
  answeredAt: number | null;
}

export interface MediaRecord {
  mediaRef: string;
  sha256: string;
  contentType: string;
  size: number;
  account: string;
  uploadedAt: number;
}

export type ChatErrorCode = 'chat_not_found' | 'forbidden' | 'message_invalid';
/** `unauthorized`: the request's API key is missing or not the account's (CONTRACT §5). */
export type PlatformErrorCode = 'flood_wait' | 'slow_mode' | 'account_unauthorized' | 'unauthorized' | ChatErrorCode | 'media_ref_invalid' | 'internal_error';
/** The buckets of `GET /sandbox/stats` `rejected`; `banned`: the send that broke a hidden limit (`unauthorized` after it). */
export type RejectReason = 'flood_wait' | 'slow_mode' | 'unauthorized' | 'banned' | 'fault' | 'invalid' | 'chat_error';

export type AnswerBody =
  | { messageId: string }
  | { mediaRef: string }
  | { items: SandboxChat[]; nextCursor: string | null }
  | { error: PlatformErrorCode | 'not_found'; retryAfterSeconds?: number; detail?: string; message?: string };

/** What the platform answers; `hangMs` delays it (a chat's `hangNextMs`); `seq`: the message it accepts. */
export interface Answer {
  status: 200 | 400 | 401 | 403 | 404 | 429 | 500;
  body: AnswerBody;
  hangMs: number;
  seq?: number;
}

export interface Rejection {
  at: number;
  account: string;
  chatId: string | null;
  idempotencyKey: string | null;
  partIndex: number | null;
  reason: RejectReason;
  status: number;
  error: PlatformErrorCode;
  retryAfterSeconds: number | null;
  detail: string | null;
}

export interface DuplicateKey {
  at: number;
  account: string;
  chatId: string;
  idempotencyKey: string;
  messageId: string;
}

export interface AccountPatch {
  maxPerMinute?: number | null;
  burst?: number | null;
  slowModeSeconds?: number | null;
  unauthorized?: boolean;
  /** The next send answers flood_wait N, then the account is blocked N s; null or 0 lifts both. */
  floodWaitSeconds?: number | null;
  /** The account's hidden limits (ban-model.ts); null: the sandbox's config applies. */
  banHourlyCap?: number | null;
  banDailyCap?: number | null;
  banMinGapMs?: number | null;
  /** A repeated Idempotency-Key answered as the first time (true, the default) or delivered again (false). */
  deduplicates?: boolean;
}

export interface ChatPatch {
  error?: ChatErrorCode | null;
  slowModeSeconds?: number | null;
  failNext?: number;
  hangNextMs?: number;
}

export type ConfigPatch = Partial<Limits> & { seed?: number };
