import { createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks (https://www.standardwebhooks.com): a secret is `whsec_` + base64 of its key
// bytes, and each delivery is signed `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with
// those key bytes, so any receiver's library for the standard can verify it.
const PREFIX = 'whsec_';
const KEY_BYTES = 32;

/** A new webhook signing secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(KEY_BYTES).toString('base64');
}

/** The key bytes of a `whsec_…` secret (the base64 part, decoded). */
export function webhookKey(secret: string): Buffer {
  if (!secret.startsWith(PREFIX)) throw new Error('a webhook secret starts with whsec_');
  return Buffer.from(secret.slice(PREFIX.length), 'base64');
}

/** The `webhook-signature` header value for one attempt: `v1,<base64 HMAC-SHA256>`. */
export function webhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', webhookKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three Standard Webhooks headers of one attempt, signed at `nowMs`. */
export function webhookHeaders(secret: string, id: string, nowMs: number, body: string): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': webhookSignature(secret, id, timestamp, body) };
}
