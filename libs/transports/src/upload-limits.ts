// The largest file a platform takes in one upload, below MEDIA_MAX_BYTES (which is the API's own
// limit for every platform). A media over it is refused before anything is posted: by the API
// when a campaign names it, and by the transport for a campaign saved before.

/** The code of a media part refused for its size, before any request. */
export const MEDIA_TOO_LARGE = 'media_too_large';

/**
 * A Telegram bot uploads at most 50 MB (multipart, every sendX method). Counted as 50,000,000
 * bytes: Telegram's "50 MB" then holds whether it means 10^6 or 2^20, and the whole multipart
 * request (the file, its caption and the form's few hundred bytes) stays under 50 MiB, the
 * limit a Bot API server or proxy applies to a request body.
 */
export const TELEGRAM_BOT_UPLOAD_MAX_BYTES = 50_000_000;

/** Per platform: the upload limit and how to name it. Absent: none below MEDIA_MAX_BYTES. */
export const UPLOAD_LIMITS: Readonly<Record<string, { maxBytes: number; what: string }>> = {
  telegram: { maxBytes: TELEGRAM_BOT_UPLOAD_MAX_BYTES, what: "a Telegram bot uploads at most 50,000,000 bytes (the Bot API's 50 MB)" },
};

/** Why a media of `size` bytes cannot be uploaded on `platform`, or null when it can. */
export function uploadTooLarge(platform: string, size: number): string | null {
  const limit = Object.hasOwn(UPLOAD_LIMITS, platform) ? UPLOAD_LIMITS[platform]! : null;
  if (limit === null || size <= limit.maxBytes) return null;
  return `the media is ${size} bytes; ${limit.what}`;
}
