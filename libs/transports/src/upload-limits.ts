// The largest file a platform takes in one upload, below MEDIA_MAX_BYTES: refused before posting, by the API or the transport.

export const MEDIA_TOO_LARGE = 'media_too_large';

/** 50 MB as 10^6: holds whichever Telegram means, and keeps the whole multipart body under a Bot API server's 50 MiB. */
export const TELEGRAM_BOT_UPLOAD_MAX_BYTES = 50_000_000;

export const UPLOAD_LIMITS: Readonly<Record<string, { maxBytes: number; what: string }>> = {
  telegram: { maxBytes: TELEGRAM_BOT_UPLOAD_MAX_BYTES, what: "a Telegram bot uploads at most 50,000,000 bytes (the Bot API's 50 MB)" },
};

export function uploadTooLarge(platform: string, size: number): string | null {
  const limit = Object.hasOwn(UPLOAD_LIMITS, platform) ? UPLOAD_LIMITS[platform]! : null;
  if (limit === null || size <= limit.maxBytes) return null;
  return `the media is ${size} bytes; ${limit.what}`;
}
