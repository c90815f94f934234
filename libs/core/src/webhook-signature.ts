import { createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks (https://www.standardwebhooks.com): secret `whsec_` + base64 key bytes, each delivery signed `v1,<base64 HMAC-SHA256 of
// "id.timestamp.body">`, so any receiver's library for the standard can verify it.
const PREFIX = 'whsec_';
const KEY_BYTES = 32;

export function newWebhookSecret(): string {
  return PREFIX + randomBytes(KEY_BYTES).toString('base64');
}

export function webhookKey(secret: string): Buffer {
  if (!secret.startsWith(PREFIX)) throw new Error('a webhook secret starts with whsec_');
  return Buffer.from(secret.slice(PREFIX.length), 'base64');
}

export function webhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', webhookKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export function webhookHeaders(secret: string, id: string, nowMs: number, body: string): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': webhookSignature(secret, id, timestamp, body) };
}
