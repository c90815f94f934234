import { createHash, createPublicKey } from 'node:crypto';
import { helpers } from 'telegram';
import { _serverKeys } from 'telegram/crypto/RSA.js';

/**
 * Where a new sign-in's MTProto connection starts, and which server keys it trusts. Telegram's
 * production data centre 2 (GramJS's default) and its two production keys, unless
 * TELEGRAM_USER_DC (`{dcId}@{ip}`, e.g. Telegram's test data centres) and
 * TELEGRAM_USER_SERVER_KEY (an RSA public key in PEM, the test data centres' own) say otherwise.
 * A signed-in session names its own data centre; the key exchange is the only step that reads the keys.
 */
export interface TelegramEndpoint {
  dcId: number;
  ip: string;
}

/** `{dcId}@{ip}` as a data centre; a clear error naming the variable otherwise. */
export function parseTelegramDc(value: string): TelegramEndpoint {
  const m = /^(\d{1,3})@([0-9.]+|\[[0-9a-fA-F:]+\])$/.exec(value.trim());
  if (!m) throw new Error(`TELEGRAM_USER_DC must be {dcId}@{ip}, e.g. 2@149.154.167.40; got ${JSON.stringify(value)}`);
  return { dcId: Number(m[1]), ip: m[2]!.replace(/^\[|\]$/g, '') };
}

/**
 * The fingerprint MTProto names an RSA key by: the lower 64 bits of SHA-1 over the TL
 * serialisation of `rsa_public_key n:bytes e:bytes`, read as a little-endian signed long.
 */
export function telegramKeyFingerprint(n: Buffer, e: Buffer): string {
  const digest = createHash('sha1')
    .update(Buffer.concat([tlBytes(n), tlBytes(e)]))
    .digest();
  return digest.readBigInt64LE(12).toString();
}

/** Adds an RSA public key (PEM) to the keys GramJS's key exchange accepts; its fingerprint. */
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

/**
 * The configured endpoint (TELEGRAM_USER_DC, TELEGRAM_USER_SERVER_KEY): trusts the key, once per
 * process, and answers where new sign-ins connect (null: Telegram's data centre 2).
 */
export function configureTelegramEndpoint(c: {
  TELEGRAM_USER_DC?: string | undefined;
  TELEGRAM_USER_SERVER_KEY?: string | undefined;
}): TelegramEndpoint | null {
  if (c.TELEGRAM_USER_SERVER_KEY) trustTelegramServerKey(c.TELEGRAM_USER_SERVER_KEY);
  return c.TELEGRAM_USER_DC ? parseTelegramDc(c.TELEGRAM_USER_DC) : null;
}
