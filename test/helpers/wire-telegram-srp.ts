import { createHash, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { Api, helpers } from 'telegram';

// The server side of Telegram's two-step verification (core.telegram.org/api/srp): SRP-6a over
// Telegram's 2048-bit prime with g = 3, the password hashed by
// PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow. The FAKE Telegram
// (wire-telegram.ts) keeps only the verifier v = g^x mod p, as Telegram does, answers
// account.getPassword with a fresh B and srp_id, and checks auth.checkPassword's M1 for real,
// so GramJS's computeCheck (telegram/Password.js) is what signs in.

/** Telegram's prime p (the one GramJS's checkPrimeAndGood accepts), big-endian. */
export const SRP_PRIME = Buffer.from(
  'c71caeb9c6b1c9048e6c522f70f13f73980d40238e3e21c14934d037563d930f48198a0aa7c14058229493d22530f4dbfa336f6e0ac925139543aed44cce7c37' +
    '20fd51f69458705ac68cd4fe6b6b13abdc9746512969328454f18faf8c595f642477fe96bb2a941d5bcd1d4ac8cc49880708fa9b378e3c4f3a9060bee67cf9a4' +
    'a4a695811051907e162753b56b0f6b410dba74d8a84b2a14b3144e0ef1284754fd17ed950d5965b4b9dd46582db1178d169c6bc465b0d6ff9ca3928fef5b9ae4' +
    'e418fc15e83ebea0f87fa9ff5eed70050ded2849f47bf959d956850ce929851f0d8115f635b105ee2e4e15d04b2454bf6f4fadf034b10403119cd8e3b92fcc5b',
  'hex',
);
export const SRP_G = 3;

const P = toBig(SRP_PRIME);
const G = BigInt(SRP_G);

/** What Telegram keeps of a two-step password: the salts and the verifier, never the password. */
export interface SrpSecret {
  salt1: Buffer;
  salt2: Buffer;
  verifier: bigint;
}

/** One account.getPassword's challenge: srp_id, the server's secret b and its public B. */
export interface SrpChallenge {
  id: bigint;
  b: bigint;
  B: Buffer;
}

/** The password's verifier, with fresh salts (salt1: the 8 bytes Telegram gives and the client's 32; salt2: 16). */
export function srpSecret(password: string, salt1: Buffer = randomBytes(40), salt2: Buffer = randomBytes(16)): SrpSecret {
  return { salt1, salt2, verifier: modPow(G, toBig(passwordHash(password, salt1, salt2)), P) };
}

/** PH2(password): SH(PBKDF2(SHA512, SH(SH(password, salt1), salt2), salt1, 100000), salt2), SH(d, s) = SHA256(s | d | s). */
export function passwordHash(password: string, salt1: Buffer, salt2: Buffer): Buffer {
  const sh = (data: Buffer, salt: Buffer) => sha256(salt, data, salt);
  const ph1 = sh(sh(Buffer.from(password, 'utf8'), salt1), salt2);
  return sh(pbkdf2Sync(ph1, salt1, 100_000, 64, 'sha512'), salt2);
}

/** A fresh challenge: B = k·v + g^b mod p, with g^b and B - k·v as large as GramJS's checks want. */
export function srpChallenge(secret: SrpSecret): SrpChallenge {
  const k = toBig(sha256(pad(SRP_PRIME), pad(G)));
  for (;;) {
    const b = toBig(randomBytes(256));
    const gb = modPow(G, b, P);
    if (!goodModExp(gb)) continue;
    const B = (k * secret.verifier + gb) % P;
    if (B <= 0n) continue;
    return { id: BigInt.asIntN(64, toBig(randomBytes(8))), b, B: pad(B) };
  }
}

/**
 * Whether the client's A and M1 prove it knows the password: S = (A · v^u)^b mod p with
 * u = H(A | B), K = H(S), M1 = H(H(p) xor H(g) | H(salt1) | H(salt2) | A | B | K).
 */
export function srpCheck(secret: SrpSecret, challenge: SrpChallenge, A: Buffer, M1: Buffer): boolean {
  const a = toBig(A);
  if (A.length > 256 || a <= 1n || a >= P - 1n || !goodModExp(a)) return false;
  const aHash = pad(a);
  const u = toBig(sha256(aHash, challenge.B));
  if (u === 0n) return false;
  const S = modPow((a * modPow(secret.verifier, u, P)) % P, challenge.b, P);
  const K = sha256(pad(S));
  const pg = xor(sha256(pad(SRP_PRIME)), sha256(pad(G)));
  const expected = sha256(pg, sha256(secret.salt1), sha256(secret.salt2), aHash, challenge.B, K);
  return M1.length === expected.length && timingSafeEqual(M1, expected);
}

/** The algorithm account.getPassword names (current_algo), for these salts. */
export function passwordAlgo(salt1: Buffer, salt2: Buffer): Api.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow {
  return new Api.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow({ salt1, salt2, g: SRP_G, p: SRP_PRIME });
}

/** account.Password as Telegram answers it: with the current algorithm, B and srp_id when a password is set. */
export function passwordAnswer(secret: SrpSecret | null, challenge: SrpChallenge | null, hint: string | null): Api.account.Password {
  const newAlgo = passwordAlgo(randomBytes(8), randomBytes(16));
  const common = {
    newAlgo,
    newSecureAlgo: new Api.SecurePasswordKdfAlgoPBKDF2HMACSHA512iter100000({ salt: randomBytes(8) }),
    secureRandom: randomBytes(256),
  };
  if (!secret || !challenge) return new Api.account.Password({ ...common, hasPassword: false });
  return new Api.account.Password({
    ...common,
    hasPassword: true,
    hasRecovery: false,
    currentAlgo: passwordAlgo(secret.salt1, secret.salt2),
    srp_B: challenge.B,
    srpId: helpers.returnBigInt(challenge.id.toString()),
    ...(hint !== null && { hint }),
  });
}

/** GramJS's isGoodModExpFirst: p - x and x both at least 2048 - 64 bits long. */
function goodModExp(x: bigint): boolean {
  const diff = P - x;
  return diff > 0n && diff.toString(2).length >= 1984 && x.toString(2).length >= 1984;
}

export function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let b = base % modulus;
  let e = exponent;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
    e >>= 1n;
  }
  return result;
}

function toBig(bytes: Buffer): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${bytes.toString('hex')}`);
}

/** A number as 256 big-endian bytes (or a shorter buffer left-padded with zeros). */
function pad(x: bigint | Buffer): Buffer {
  const hex = Buffer.isBuffer(x) ? '' : x.toString(16);
  const bytes = Buffer.isBuffer(x) ? x : Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
  return Buffer.concat([Buffer.alloc(Math.max(0, 256 - bytes.length)), bytes]);
}

function sha256(...parts: Buffer[]): Buffer {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
}

function xor(a: Buffer, b: Buffer): Buffer {
  return Buffer.from(a.map((x, i) => x ^ b[i]!));
}
