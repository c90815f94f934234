import { createHash } from 'node:crypto';
import { helpers } from 'telegram';

/**
 * The MTProto `random_id` of a send: the first 8 bytes of SHA-256 over its idempotency key
 * `{runId}:{chatId}:{partIndex}`, as a signed 64-bit integer. Fixed per (run, chat, part), so
 * every re-send of a part carries the same one: Telegram answers a repeat of a delivered one with
 * the messages the first send made (their ids) instead of posting it twice, and with
 * RANDOM_ID_DUPLICATE while it still processes the first.
 */
export function randomIdOf(idempotencyKey: string): ReturnType<typeof helpers.readBigIntFromBuffer> {
  const bytes = createHash('sha256').update(idempotencyKey, 'utf8').digest().subarray(0, 8);
  return helpers.readBigIntFromBuffer(bytes, true, true);
}
