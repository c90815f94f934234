import type { SendFailure } from '@metronome/core';
import { KeysUnsavedError } from './keys-unsaved-error.js';

// What a WhatsApp failure means for a target and its run (CONTRACT §4, §5); the numbers are WhatsApp's own.

/**
 * `connection`: Baileys' DisconnectReason; `query`: a server error node's code; `timeout`: no answer after the write;
 * `keys-unsaved`: the store refused the send's keys (auth-state.ts); `unknown`: anything else thrown after the write.
 */
export type WhatsAppFailure =
  | { source: 'connection'; statusCode: number; message: string }
  | { source: 'keys-unsaved'; message: string }
  | { source: 'query'; code: number; message: string }
  | { source: 'timeout'; message: string }
  | { source: 'unknown'; message: string };

/** How long an account whose connection another one of the device replaced (440) stays away, ms. */
export const REPLACED_HOLD_MS = 60_000;

type Rule =
  | { kind: 'rate-overlimit' }
  | { kind: 'account-wait'; code: string; retryAfterMs: number }
  | { kind: 'account-unavailable' | 'rejected' | 'retriable' | 'ambiguous'; code: string };

/** Every `output.statusCode` a Baileys socket closes or throws with, for a written send; before the write none is ambiguous. */
export const CONNECTION_RULES: Readonly<Record<number, Rule>> = {
  401: { kind: 'account-unavailable', code: 'logged_out' },
  403: { kind: 'account-unavailable', code: 'account_forbidden' },
  // The client version refused: no reconnection helps until WHATSAPP_VERSION is updated (CONTRACT §2).
  405: { kind: 'account-unavailable', code: 'client_outdated' },
  411: { kind: 'account-unavailable', code: 'multidevice_mismatch' },
  419: { kind: 'account-unavailable', code: 'account_unauthorized' },
  // Another connection of this device took over. Reconnecting at once would fight it.
  440: { kind: 'account-wait', code: 'connection_replaced', retryAfterMs: REPLACED_HOLD_MS },
  429: { kind: 'rate-overlimit' },
  428: { kind: 'retriable', code: 'connection_closed' },
  // The message may have been written; before the write, a Baileys query (metadata, devices, sessions) timed out.
  408: { kind: 'ambiguous', code: 'connection_lost' },
  500: { kind: 'retriable', code: 'bad_session' },
  503: { kind: 'retriable', code: 'service_unavailable' },
  515: { kind: 'retriable', code: 'restart_required' },
};

export const QUERY_RULES: Readonly<Record<number, Rule>> = {
  429: { kind: 'rate-overlimit' },
  400: { kind: 'rejected', code: 'bad_request' },
  401: { kind: 'rejected', code: 'not_authorized' },
  403: { kind: 'rejected', code: 'forbidden' },
  404: { kind: 'rejected', code: 'chat_not_found' },
  406: { kind: 'rejected', code: 'not_acceptable' },
  408: { kind: 'ambiguous', code: 'timeout' },
  500: { kind: 'retriable', code: 'server_error' },
  503: { kind: 'retriable', code: 'service_unavailable' },
};

export interface OverlimitBackoff {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_OVERLIMIT_BACKOFF: OverlimitBackoff = { baseMs: 60_000, maxMs: 30 * 60_000 };

/** The wait after the `streak`-th `rate-overlimit` in a row (1-based): 60 s, 120 s, 240 s… capped. */
export function overlimitWaitMs(streak: number, backoff: OverlimitBackoff = DEFAULT_OVERLIMIT_BACKOFF): number {
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, Math.min(streak, 32) - 1));
}

/** `overlimitStreak` includes this failure when it is one; `written`: handed to the socket's write (before it: retried, never `unknown`). */
export function classifyWhatsAppFailure(
  failure: WhatsAppFailure,
  overlimitStreak = 1,
  backoff: OverlimitBackoff = DEFAULT_OVERLIMIT_BACKOFF,
  written = true,
): SendFailure {
  let rule = ruleFor(failure);
  if (!written && rule.kind === 'ambiguous')
    rule = { kind: 'retriable', code: failure.source === 'connection' && failure.statusCode === 408 ? 'timed_out' : rule.code };
  switch (rule.kind) {
    case 'rate-overlimit':
      return { kind: 'account-wait', code: 'rate_overlimit', retryAfterMs: overlimitWaitMs(overlimitStreak, backoff) };
    case 'account-wait':
      return { kind: 'account-wait', code: rule.code, retryAfterMs: rule.retryAfterMs };
    default:
      return { kind: rule.kind, code: rule.code, message: failure.message };
  }
}

/** True when the failure is the account being rate limited (the caller's streak grows). */
export function isOverlimit(failure: WhatsAppFailure): boolean {
  return ruleFor(failure).kind === 'rate-overlimit';
}

function ruleFor(failure: WhatsAppFailure): Rule {
  switch (failure.source) {
    case 'connection':
      return CONNECTION_RULES[failure.statusCode] ?? { kind: 'retriable', code: `connection_${failure.statusCode}` };
    case 'query':
      return (
        QUERY_RULES[failure.code] ??
        (failure.code >= 400 && failure.code < 500 ? { kind: 'rejected', code: `error_${failure.code}` } : { kind: 'retriable', code: `error_${failure.code}` })
      );
    case 'timeout':
      return { kind: 'ambiguous', code: 'timeout' };
    case 'keys-unsaved':
      // Before the write (a device lookup's keys): nothing went; the socket stays closed until the store takes the keys.
      return { kind: 'account-wait', code: 'keys_unsaved', retryAfterMs: 3_000 };
    case 'unknown':
      // Thrown after the hand-over for a reason we cannot read: it may have gone out.
      return { kind: 'ambiguous', code: 'send_failed' };
  }
}

/** Reads a Baileys (@hapi/boom) error: a server node's code in `data`, the socket's status in `output.statusCode`; never the text. */
export function failureOf(error: unknown): WhatsAppFailure {
  const e = (error && typeof error === 'object' ? error : {}) as { isBoom?: unknown; data?: unknown; output?: { statusCode?: unknown }; message?: unknown };
  const message = typeof e.message === 'string' ? e.message : String(error);
  if (error instanceof KeysUnsavedError) return { source: 'keys-unsaved', message };
  if (e.isBoom === true) {
    if (typeof e.data === 'number' && Number.isFinite(e.data)) return { source: 'query', code: e.data, message };
    const status = e.output?.statusCode;
    if (typeof status === 'number') return { source: 'connection', statusCode: status, message };
  }
  return { source: 'unknown', message };
}

/** A server ERROR ack of a written message; `new-chat-refused` (463): this one failed and the account's new chats wait. */
export type AckRefusal = { kind: 'new-chat-refused'; code: 'new_chat_refused' } | { kind: 'rejected'; code: string } | { kind: 'ambiguous'; code: string };

/**
 * Codes Baileys passes on from a server ERROR ack (handleBadAck): 463 MessageAccountRestriction, a new chat without the
 * recipient's privacy token (retrying "worsens the restriction"), and 479 SmaxInvalid.
 */
export function classifyAckError(code: number): AckRefusal {
  if (code === 463) return { kind: 'new-chat-refused', code: 'new_chat_refused' };
  if (code === 479) return { kind: 'rejected', code: 'message_invalid' };
  return { kind: 'ambiguous', code: `ack_error_${code}` };
}
