/**
 * What a platform's answer to one send means (CONTRACT §5), independent of the platform.
 * Transports translate their own answers into this; the sender acts on it.
 */
export type SendResult =
  /**
   * `mediaRef`: the platform's reference to media this send uploaded (platforms whose only
   * upload is a send, such as Telegram's file_id), to be reused instead of uploading again.
   */
  | { kind: 'delivered'; messageId: string; mediaRef?: string }
  /** the account may send nothing for `retryAfterMs` */
  | { kind: 'account-wait'; retryAfterMs: number; code: string }
  /** only this chat must wait `retryAfterMs` */
  | { kind: 'chat-wait'; retryAfterMs: number; code: string }
  /** the account is logged out or banned */
  | { kind: 'account-unavailable'; code: string; message: string }
  /** permanent for this chat */
  | { kind: 'rejected'; code: string; message: string }
  /** not delivered; safe to try again */
  | { kind: 'retriable'; code: string; message: string }
  /** may or may not have been delivered; never re-sent automatically */
  | { kind: 'ambiguous'; code: string; message: string }
  /**
   * not delivered: the chat now lives under `newChatId` (a Telegram group upgraded to a
   * supergroup); send there instead, without counting an attempt
   */
  | { kind: 'chat-moved'; newChatId: string; code: string; message: string };

/** Every result but a delivery. */
export type SendFailure = Exclude<SendResult, { kind: 'delivered' }>;

/**
 * The code a transport gives a `rejected` send whose media reference the platform no longer
 * accepts (a Telegram file_id it refuses): the sender forgets the reference and retries, which
 * uploads the media again, instead of failing every later chat of that media.
 */
export const MEDIA_REF_INVALID = 'media_ref_invalid';

/**
 * Classifies an HTTP-platform answer (status and parsed JSON body).
 * Unknown 4xx answers are treated as permanent: retrying a request the platform calls bad
 * cannot succeed, and failing loudly is safer than looping.
 */
export function classifyHttpAnswer(status: number, body: unknown): SendResult {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const code = typeof b['error'] === 'string' ? (b['error'] as string) : `http_${status}`;
  const message = typeof b['message'] === 'string' ? (b['message'] as string) : `platform answered ${status}`;
  if (status >= 200 && status < 300) {
    const id = b['messageId'];
    if (typeof id === 'string' || typeof id === 'number') return { kind: 'delivered', messageId: String(id) };
    // A 2xx without an id still means the platform took the message.
    return { kind: 'delivered', messageId: '' };
  }
  if (status === 429) {
    const seconds = Number(b['retryAfterSeconds']);
    const retryAfterMs = Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds * 1000) : 1000;
    if (code === 'slow_mode') return { kind: 'chat-wait', retryAfterMs, code };
    return { kind: 'account-wait', retryAfterMs, code: code === `http_429` ? 'flood_wait' : code };
  }
  if (status === 401) return { kind: 'account-unavailable', code: code === 'http_401' ? 'account_unauthorized' : code, message };
  // CONTRACT §5 extension: the platform does not know the media ref (it expired or the platform
  // forgot it). Rejected under MEDIA_REF_INVALID, so the sender uploads again and resends.
  if (status === 400 && code === MEDIA_REF_INVALID) return { kind: 'rejected', code: MEDIA_REF_INVALID, message };
  if (status >= 500) return { kind: 'retriable', code, message };
  if (status === 408) return { kind: 'retriable', code, message };
  return { kind: 'rejected', code, message };
}

/** Node network errors that prove the request never reached the platform. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET_BEFORE_WRITE']);

/**
 * Node's codes for a request it refused to build (a header value or URL it cannot carry). Such
 * a request never left the process and would be refused the same way again: a failure, not a retry.
 */
const NOT_BUILDABLE_CODES = new Set([
  'ERR_INVALID_CHAR',
  'ERR_INVALID_HTTP_TOKEN',
  'ERR_HTTP_INVALID_HEADER_VALUE',
  'ERR_UNESCAPED_CHARACTERS',
  'ERR_INVALID_URL',
]);

/** The code of a send that failed because its request could not be built (see NOT_BUILDABLE_CODES). */
export const REQUEST_INVALID = 'request_invalid';

/**
 * Classifies a failure with no answer. `written` tells whether the request was fully written
 * before the failure: after that, the platform may have acted on it, so the result is ambiguous.
 * Before that, it is never ambiguous: a request that could not be built is rejected, any other
 * failure is retried.
 */
export function classifyTransportFailure(code: string | undefined, written: boolean, message: string): SendFailure {
  if (!written && code !== undefined && NOT_BUILDABLE_CODES.has(code)) return { kind: 'rejected', code: REQUEST_INVALID, message };
  if (!written || (code !== undefined && NOT_SENT_CODES.has(code))) {
    return { kind: 'retriable', code: (code ?? 'network_error').toLowerCase(), message };
  }
  return { kind: 'ambiguous', code: code === 'timeout' ? 'timeout' : (code ?? 'connection_lost').toLowerCase(), message };
}
