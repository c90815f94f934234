import { createHash } from 'node:crypto';
import { helpers } from 'telegram';

/**
 * The first 8 bytes of SHA-256 over the idempotency key, fixed per (run, chat, part): Telegram answers a repeat of a delivered
 * send with the first send's messages instead of posting twice, and RANDOM_ID_DUPLICATE while it still processes the first.
 */
export function randomIdOf(idempotencyKey: string): ReturnType<typeof helpers.readBigIntFromBuffer> {
  const bytes = createHash('sha256').update(idempotencyKey, 'utf8').digest().subarray(0, 8);
  return helpers.readBigIntFromBuffer(bytes, true, true);
}
