import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// Sealed layout: version(1) | keyId(4) | iv(12) | tag(16) | ciphertext; the key id lets a deployment rotate SECRETS_KEY.
const VERSION = 1;

// hashed once per key: every job opens its account's credentials
const keyIds = new WeakMap<Buffer, Buffer>();

export function keyId(key: Buffer): Buffer {
  let id = keyIds.get(key);
  if (id === undefined) {
    id = createHash('sha256').update(key).digest().subarray(0, 4);
    keyIds.set(key, id);
  }
  return id;
}

export function seal(plaintext: Buffer | string, key: Buffer): Buffer {
  if (key.length !== 32) throw new Error('secrets key must be 32 bytes');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), keyId(key), iv, cipher.getAuthTag(), body]);
}

/** Decrypts what `seal` produced with any of `keys` (current first, then retired ones). */
export function open(sealed: Buffer, keys: Buffer[]): Buffer {
  if (sealed.length < 33 || sealed[0] !== VERSION) throw new Error('not a sealed secret');
  const id = sealed.subarray(1, 5);
  const key = keys.find((k) => keyId(k).equals(id));
  if (!key) throw new Error('sealed with a key that is not configured');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(5, 17));
  decipher.setAuthTag(sealed.subarray(17, 33));
  return Buffer.concat([decipher.update(sealed.subarray(33)), decipher.final()]);
}

export function isSealedWith(sealed: Buffer, key: Buffer): boolean {
  return sealed.length >= 5 && sealed[0] === VERSION && sealed.subarray(1, 5).equals(keyId(key));
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

export function newToken(prefix = 'mtr'): string {
  return `${prefix}_${randomBytes(24).toString('base64url')}`;
}

/** The development-only key used when SECRETS_KEY is unset and NODE_ENV=development. */
export const DEVELOPMENT_SECRETS_KEY = createHash('sha256').update('metronome development key — not secret').digest();
