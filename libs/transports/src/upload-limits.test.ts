import { TELEGRAM_BOT_UPLOAD_MAX_BYTES, uploadTooLarge } from './upload-limits.js';

describe('uploadTooLarge', () => {
  test.each([
    ['telegram', TELEGRAM_BOT_UPLOAD_MAX_BYTES, null],
    ['telegram', TELEGRAM_BOT_UPLOAD_MAX_BYTES + 1, "the media is 50000001 bytes; a Telegram bot uploads at most 50,000,000 bytes (the Bot API's 50 MB)"],
    // a user account (MTProto) uploads up to 2 GB; the others have no limit of their own here
    ['telegram_user', 60_000_000, null],
    ['whatsapp', 60_000_000, null],
    ['http', 60_000_000, null],
    ['toString', 60_000_000, null],
  ])('%s, %d bytes → %s', (platform, size, expected) => {
    expect(uploadTooLarge(platform, size)).toBe(expected);
  });

  test('50 MB as Telegram may count it either way: under 50 MiB with room for the form', () => {
    expect(TELEGRAM_BOT_UPLOAD_MAX_BYTES).toBeLessThanOrEqual(50 * 1024 * 1024 - 64 * 1024);
  });
});
