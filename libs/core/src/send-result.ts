/** What a platform's answer to one send means (CONTRACT §5), whatever the platform; transports translate their answers into this. */
export type SendResult =
  /** `mediaRef`: the platform's reference to media this send uploaded (a Telegram file_id), reused instead of uploading again */
  | { kind: 'delivered'; messageId: string; mediaRef?: string }
  | { kind: 'account-wait'; retryAfterMs: number; code: string }
  | { kind: 'chat-wait'; retryAfterMs: number; code: string }
  | { kind: 'account-unavailable'; code: string; message: string }
  | { kind: 'rejected'; code: string; message: string }
  /** not delivered; safe to try again */
  | { kind: 'retriable'; code: string; message: string }
  /** may or may not have been delivered; never re-sent automatically */
  | { kind: 'ambiguous'; code: string; message: string }
  /** the chat now lives under `newChatId` (a Telegram group became a supergroup): send there, no attempt counted */
  | { kind: 'chat-moved'; newChatId: string; code: string; message: string };

export type SendFailure = Exclude<SendResult, { kind: 'delivered' }>;

/** A `rejected` code for a media reference the platform no longer accepts: the sender forgets it and retries, uploading again. */
export const MEDIA_REF_INVALID = 'media_ref_invalid';

/** Classifies an HTTP platform's answer; an unknown 4xx is permanent, since retrying a request the platform calls bad cannot succeed. */
export function classifyHttpAnswer(status: number, body: unknown): SendResult {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const code = typeof b['error'] === 'string' ? (b['error'] as string) : `http_${status}`;
  const message = typeof b['message'] === 'string' ? (b['message'] as string) : `platform answered ${status}`;
  if (status >= 200 && status < 300) {
    const id = b['messageId'];
    if (typeof id === 'string' || typeof id === 'number') return { kind: 'delivered', messageId: String(id) };
    return { kind: 'delivered', messageId: '' };
  }
  if (status === 429) {
    const seconds = Number(b['retryAfterSeconds']);
    const retryAfterMs = Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds * 1000) : 1000;
    if (code === 'slow_mode') return { kind: 'chat-wait', retryAfterMs, code };
    return { kind: 'account-wait', retryAfterMs, code: code === `http_429` ? 'flood_wait' : code };
  }
  if (status === 401) return { kind: 'account-unavailable', code: code === 'http_401' ? 'account_unauthorized' : code, message };
  if (status === 400 && code === MEDIA_REF_INVALID) return { kind: 'rejected', code: MEDIA_REF_INVALID, message };
  if (status >= 500) return { kind: 'retriable', code, message };
  if (status === 408) return { kind: 'retriable', code, message };
  return { kind: 'rejected', code, message };
}

/** Node network errors that prove the request never reached the platform. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET_BEFORE_WRITE']);

/** Requests Node refused to build (a header or URL it cannot carry): they never left the process and would fail again, so rejected, not retried. */
const NOT_BUILDABLE_CODES = new Set([
  'ERR_INVALID_CHAR',
  'ERR_INVALID_HTTP_TOKEN',
  'ERR_HTTP_INVALID_HEADER_VALUE',
  'ERR_UNESCAPED_CHARACTERS',
  'ERR_INVALID_URL',
]);

export const REQUEST_INVALID = 'request_invalid';

/** Classifies a failure with no answer: once the request was fully written the platform may have acted on it (ambiguous); before that, retried. */
export function classifyTransportFailure(code: string | undefined, written: boolean, message: string): SendFailure {
  if (!written && code !== undefined && NOT_BUILDABLE_CODES.has(code)) return { kind: 'rejected', code: REQUEST_INVALID, message };
  if (!written || (code !== undefined && NOT_SENT_CODES.has(code))) {
    return { kind: 'retriable', code: (code ?? 'network_error').toLowerCase(), message };
  }
  return { kind: 'ambiguous', code: code === 'timeout' ? 'timeout' : (code ?? 'connection_lost').toLowerCase(), message };
}
