import { createHash, createPublicKey } from 'node:crypto';
import { helpers } from 'telegram';
import { _serverKeys } from 'telegram/crypto/RSA.js';

/**
 * Where a new sign-in connects and which server keys it trusts: Telegram's DC 2 and production keys unless TELEGRAM_USER_DC and
 * TELEGRAM_USER_SERVER_KEY say otherwise (test data centres). Only the key exchange reads the keys.
 */
export interface TelegramEndpoint {
  dcId: number;
  ip: string;
}

export function parseTelegramDc(value: string): TelegramEndpoint {
  const m = /^(\d{1,3})@([0-9.]+|\[[0-9a-fA-F:]+\])$/.exec(value.trim());
  if (!m) throw new Error(`TELEGRAM_USER_DC must be {dcId}@{ip}, e.g. 2@149.154.167.40; got ${JSON.stringify(value)}`);
  return { dcId: Number(m[1]), ip: m[2]!.replace(/^\[|\]$/g, '') };
}

/** MTProto's RSA key fingerprint: the lower 64 bits of SHA-1 over TL `rsa_public_key n:bytes e:bytes`, little-endian signed. */
export function telegramKeyFingerprint(n: Buffer, e: Buffer): string {
  const digest = createHash('sha1')
    .update(Buffer.concat([tlBytes(n), tlBytes(e)]))
    .digest();
  return digest.readBigInt64LE(12).toString();
}

export function trustTelegramServerKey(pem: string): string {
  const jwk = createPublicKey(pem).export({ format: 'jwk' });
  if (jwk.kty !== 'RSA' || !jwk.n || !jwk.e) throw new Error('TELEGRAM_USER_SERVER_KEY must be an RSA public key in PEM');
  const n = Buffer.from(jwk.n, 'base64url');
  const e = Buffer.from(jwk.e, 'base64url');
  const fingerprint = telegramKeyFingerprint(n, e);
  _serverKeys.set(fingerprint, { n: helpers.returnBigInt(BigInt(`0x${n.toString('hex')}`).toString()), e: Number(BigInt(`0x${e.toString('hex')}`)) });
  return fingerprint;
}

/** TL `bytes`: a length byte (or 254 and three length bytes), the data, zero padding to 4. */
function tlBytes(data: Buffer): Buffer {
  const head = data.length < 254 ? Buffer.from([data.length]) : Buffer.from([254, data.length & 0xff, (data.length >> 8) & 0xff, (data.length >> 16) & 0xff]);
  const body = Buffer.concat([head, data]);
  return Buffer.concat([body, Buffer.alloc((4 - (body.length % 4)) % 4)]);
}

/** Trusts the configured key once per process; where new sign-ins connect (null: Telegram's DC 2). */
export function configureTelegramEndpoint(c: {
  TELEGRAM_USER_DC?: string | undefined;
  TELEGRAM_USER_SERVER_KEY?: string | undefined;
}): TelegramEndpoint | null {
  if (c.TELEGRAM_USER_SERVER_KEY) trustTelegramServerKey(c.TELEGRAM_USER_SERVER_KEY);
  return c.TELEGRAM_USER_DC ? parseTelegramDc(c.TELEGRAM_USER_DC) : null;
}
