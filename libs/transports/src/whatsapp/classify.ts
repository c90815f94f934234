import type { SendFailure } from '@metronome/core';
import { KeysUnsavedError } from './keys-unsaved-error.js';

// What a WhatsApp failure means for a target and its run (CONTRACT §4 and §5, read for
// WhatsApp). Pure and table-driven: no Baileys import, the numbers are WhatsApp's own.

/**
 * Where a failure came from:
 * - `connection`: the socket closed or could not open; `statusCode` is Baileys' DisconnectReason
 *   (401 logged out, 428 closed, 408 lost or timed out, 440 replaced, 515 restart required…)
 * - `query`: the server answered a request with an error node; `code` is its code attribute
 *   (429 `rate-overlimit`, 404 `item-not-found`, 403 `forbidden`…)
 * - `timeout`: no answer within the send timeout after the message was handed to the socket
 * - `keys-unsaved`: the store did not take the keys of the send's key transaction (auth-state.ts)
 * - `unknown`: anything else thrown after the hand-over
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

/**
 * Every status a Baileys socket closes with or throws as `output.statusCode` (its
 * DisconnectReason, the `reason` of a `failure` node, a stream error's `code`, Boom statuses of
 * its own): the one table of what each means for a send written to the socket. A failure before
 * the write is never ambiguous (classifyWhatsAppFailure's `written`).
 */
export const CONNECTION_RULES: Readonly<Record<number, Rule>> = {
  401: { kind: 'account-unavailable', code: 'logged_out' },
  403: { kind: 'account-unavailable', code: 'account_forbidden' },
  // WhatsApp refuses the client version (a `failure` node, reason 405): no reconnection helps
  // until the version is updated (WHATSAPP_VERSION, CONTRACT §2).
  405: { kind: 'account-unavailable', code: 'client_outdated' },
  411: { kind: 'account-unavailable', code: 'multidevice_mismatch' },
  419: { kind: 'account-unavailable', code: 'account_unauthorized' },
  // Another connection of this device took over. Reconnecting at once would fight it.
  440: { kind: 'account-wait', code: 'connection_replaced', retryAfterMs: REPLACED_HOLD_MS },
  429: { kind: 'rate-overlimit' },
  // The socket was not open when the message was to be written: nothing left.
  428: { kind: 'retriable', code: 'connection_closed' },
  // Lost mid-way, or the write itself timed out: the message may have been written. Before the
  // write, 408 is a query of Baileys' own (group metadata, devices, sessions) that timed out.
  408: { kind: 'ambiguous', code: 'connection_lost' },
  500: { kind: 'retriable', code: 'bad_session' },
  503: { kind: 'retriable', code: 'service_unavailable' },
  515: { kind: 'retriable', code: 'restart_required' },
};

/** Error codes the server answers a request with. */
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

/** How the account backs off after `rate-overlimit`: doubling from `baseMs` on repeats, capped. */
export interface OverlimitBackoff {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_OVERLIMIT_BACKOFF: OverlimitBackoff = { baseMs: 60_000, maxMs: 30 * 60_000 };

/** The wait after the `streak`-th `rate-overlimit` in a row (1-based): 60 s, 120 s, 240 s… capped. */
export function overlimitWaitMs(streak: number, backoff: OverlimitBackoff = DEFAULT_OVERLIMIT_BACKOFF): number {
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, Math.min(streak, 32) - 1));
}

/**
 * What a failure means. `overlimitStreak` counts this account's `rate-overlimit` answers in a
 * row including this one, when this one is one (the caller keeps the count). `written`: the
 * message was handed to the socket's write; a failure before it sent nothing, so it is retried,
 * never left `unknown`.
 */
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
      // An unknown close: the connection is gone, nothing more was written after it.
      return CONNECTION_RULES[failure.statusCode] ?? { kind: 'retriable', code: `connection_${failure.statusCode}` };
    case 'query':
      return (
        QUERY_RULES[failure.code] ??
        (failure.code >= 400 && failure.code < 500 ? { kind: 'rejected', code: `error_${failure.code}` } : { kind: 'retriable', code: `error_${failure.code}` })
      );
    case 'timeout':
      return { kind: 'ambiguous', code: 'timeout' };
    case 'keys-unsaved':
      // Before the write (a device lookup's keys): nothing went; the socket is closed until the
      // store takes the keys. After it, the message went: the transport says so, never this table.
      return { kind: 'account-wait', code: 'keys_unsaved', retryAfterMs: 3_000 };
    case 'unknown':
      // Thrown after the hand-over for a reason we cannot read: it may have gone out.
      return { kind: 'ambiguous', code: 'send_failed' };
  }
}

/**
 * Reads a thrown value the way Baileys shapes its errors (@hapi/boom): a server error node's
 * code is in `data` (a number), the socket's status in `output.statusCode`. Never the message text.
 */
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

/** What a server ERROR acknowledgement of a written message means (ack-errors are after the write). */
export type AckRefusal =
  /** a message to a new chat without its privacy token (463): this one failed, the account's new chats wait (new-chats.ts) */
  | { kind: 'new-chat-refused'; code: 'new_chat_refused' }
  /** this message was refused for good */
  | { kind: 'rejected'; code: string }
  /** refused for a reason not known here: it may or may not have reached the chat */
  | { kind: 'ambiguous'; code: string };

/**
 * The codes Baileys passes on from a server ERROR ack (Socket/messages-recv.js handleBadAck,
 * SERVER_ERROR_CODES): 463 MessageAccountRestriction — a one-to-one message without the
 * recipient's privacy token: WhatsApp blocks starting new chats and keeps existing ones; its
 * comment warns that retrying "worsens the restriction" — and 479 SmaxInvalid, the stanza refused
 * as invalid.
 */
export function classifyAckError(code: number): AckRefusal {
  if (code === 463) return { kind: 'new-chat-refused', code: 'new_chat_refused' };
  if (code === 479) return { kind: 'rejected', code: 'message_invalid' };
  return { kind: 'ambiguous', code: `ack_error_${code}` };
}
