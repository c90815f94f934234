// The server side of MTProto's auth key exchange for the FAKE Telegram on the wire
// (wire-telegram-mtproto.ts): req_pq_multi → resPQ, req_DH_params (RSA_PAD, decrypted with the
// server's RSA key) → server_DH_params_ok, set_client_DH_params → dh_gen_ok. The mirror of
// GramJS's network/Authenticator.js, on GramJS's own TL classes, AES-IGE and AuthKey.
import { constants, createHash, generateKeyPair, type KeyObject, privateDecrypt, randomBytes, randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import { telegramKeyFingerprint } from '@metronome/transports/telegram-user';
import { Api, extensions, helpers } from 'telegram';
import { AuthKey } from 'telegram/crypto/AuthKey.js';
import { IGE } from 'telegram/crypto/IGE.js';

type BigInteger = ReturnType<typeof helpers.returnBigInt>;

/** Telegram's own 2048-bit safe prime for the key exchange, with g = 3. */
const DH_PRIME = Buffer.from(
  'c71caeb9c6b1c9048e6c522f70f13f73980d40238e3e21c14934d037563d930f48198a0aa7c14058229493d22530f4db' +
    'fa336f6e0ac925139543aed44cce7c3720fd51f69458705ac68cd4fe6b6b13abdc9746512969328454f18faf8c595f64' +
    '2477fe96bb2a941d5bcd1d4ac8cc49880708fa9b378e3c4f3a9060bee67cf9a4a4a695811051907e162753b56b0f6b41' +
    '0dba74d8a84b2a14b3144e0ef1284754fd17ed950d5965b4b9dd46582db1178d169c6bc465b0d6ff9ca3928fef5b9ae4' +
    'e418fc15e83ebea0f87fa9ff5eed70050ded2849f47bf959d956850ce929851f0d8115f635b105ee2e4e15d04b2454bf' +
    '6f4fadf034b10403119cd8e3b92fcc5b',
  'hex',
);
const G = 3;

const sha1 = (data: Buffer): Buffer => createHash('sha1').update(data).digest();
const sha256 = (data: Buffer): Buffer => createHash('sha256').update(data).digest();
const big = (data: Buffer): BigInteger => helpers.readBigIntFromBuffer(data, false, false);

/** The server's RSA key: the public half as PEM (spki) for trustTelegramServerKey, and its MTProto fingerprint. */
export interface ServerRsaKey {
  pem: string;
  privateKey: KeyObject;
  /** signed decimal, as GramJS keys its _serverKeys */
  fingerprint: string;
}

export async function makeServerRsaKey(): Promise<ServerRsaKey> {
  const { publicKey, privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' });
  const fingerprint = telegramKeyFingerprint(Buffer.from(jwk.n!, 'base64url'), Buffer.from(jwk.e!, 'base64url'));
  return { pem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), privateKey, fingerprint };
}

/** A prime in [2^22, 2^23): pq then has 45 or 46 bits, never a leading byte GramJS would read as negative. */
function smallPrime(): number {
  for (;;) {
    const n = randomInt(2 ** 22, 2 ** 23) | 1;
    let prime = true;
    for (let d = 3; d * d <= n; d += 2) {
      if (n % d === 0) {
        prime = false;
        break;
      }
    }
    if (prime) return n;
  }
}

class KeyExchangeError extends Error {}

/** The answer to one step; `key`: the auth key the exchange made (after its last step). */
export interface KeyExchangeStep {
  answer: { getBytes(): Buffer };
  key?: Buffer;
}

/** One connection's key exchange, step by step; a step out of order or a failed check throws. */
export class KeyExchange {
  private nonce: BigInteger | null = null;
  private serverNonce: BigInteger | null = null;
  private p = 0;
  private q = 0;
  private newNonce: BigInteger | null = null;
  private a: BigInteger | null = null;
  private tmp: { key: Buffer; iv: Buffer } | null = null;

  constructor(private readonly rsa: ServerRsaKey) {}

  static handles(request: unknown): boolean {
    return request instanceof Api.ReqPqMulti || request instanceof Api.ReqPq || request instanceof Api.ReqDHParams || request instanceof Api.SetClientDHParams;
  }

  async step(request: unknown): Promise<KeyExchangeStep> {
    if (request instanceof Api.ReqPqMulti || request instanceof Api.ReqPq) return { answer: this.resPq(request.nonce) };
    if (request instanceof Api.ReqDHParams) return { answer: await this.dhParams(request) };
    if (request instanceof Api.SetClientDHParams) return this.dhGen(request);
    throw new KeyExchangeError(`not a step of the key exchange: ${String((request as { className?: string })?.className)}`);
  }

  private resPq(nonce: BigInteger): Api.ResPQ {
    this.nonce = nonce;
    this.serverNonce = helpers.readBigIntFromBuffer(randomBytes(16), true, true);
    this.p = smallPrime();
    do this.q = smallPrime();
    while (this.q === this.p);
    if (this.p > this.q) [this.p, this.q] = [this.q, this.p];
    return new Api.ResPQ({
      nonce,
      serverNonce: this.serverNonce,
      pq: helpers.getByteArray(helpers.returnBigInt(BigInt(this.p) * BigInt(this.q))),
      serverPublicKeyFingerprints: [helpers.returnBigInt(this.rsa.fingerprint)],
    });
  }

  private checkNonces(r: { nonce: BigInteger; serverNonce: BigInteger }): void {
    if (!this.nonce || !this.serverNonce || r.nonce.neq(this.nonce) || r.serverNonce.neq(this.serverNonce)) {
      throw new KeyExchangeError('key exchange: nonce or server nonce does not match');
    }
  }

  private async dhParams(r: Api.ReqDHParams): Promise<Api.ServerDHParamsOk> {
    this.checkNonces(r);
    if (r.publicKeyFingerprint.toString() !== this.rsa.fingerprint) throw new KeyExchangeError('key exchange: not our RSA key');
    if (!big(r.p).eq(this.p) || !big(r.q).eq(this.q)) throw new KeyExchangeError('key exchange: wrong factors of pq');
    // RSA_PAD: key_aes_encrypted = temp_key_xor (32) + aes_encrypted (224)
    const keyAesEncrypted = privateDecrypt({ key: this.rsa.privateKey, padding: constants.RSA_NO_PADDING }, r.encryptedData);
    const aesEncrypted = keyAesEncrypted.subarray(32);
    const tempKey = helpers.bufferXor(keyAesEncrypted.subarray(0, 32), sha256(aesEncrypted));
    const dataWithHash = new IGE(tempKey, Buffer.alloc(32)).decryptIge(aesEncrypted);
    const dataWithPadding = Buffer.from(dataWithHash.subarray(0, 192)).reverse();
    if (!sha256(Buffer.concat([tempKey, dataWithPadding])).equals(dataWithHash.subarray(192, 224))) {
      throw new KeyExchangeError('key exchange: RSA_PAD hash does not match');
    }
    const inner = new extensions.BinaryReader(dataWithPadding).tgReadObject();
    if (!(inner instanceof Api.PQInnerData || inner instanceof Api.PQInnerDataDc)) throw new KeyExchangeError('key exchange: no p_q_inner_data');
    this.checkNonces(inner);
    this.newNonce = inner.newNonce;
    this.a = big(randomBytes(256));
    const gA = helpers.modExp(helpers.returnBigInt(G), this.a, big(DH_PRIME));
    const answer = new Api.ServerDHInnerData({
      nonce: inner.nonce,
      serverNonce: inner.serverNonce,
      g: G,
      dhPrime: DH_PRIME,
      gA: helpers.getByteArray(gA),
      serverTime: Math.floor(Date.now() / 1000),
    }).getBytes();
    this.tmp = await helpers.generateKeyDataFromNonce(inner.serverNonce, inner.newNonce);
    return new Api.ServerDHParamsOk({
      nonce: inner.nonce,
      serverNonce: inner.serverNonce,
      encryptedAnswer: new IGE(this.tmp.key, this.tmp.iv).encryptIge(Buffer.concat([sha1(answer), answer])),
    });
  }

  private async dhGen(r: Api.SetClientDHParams): Promise<KeyExchangeStep> {
    this.checkNonces(r);
    if (!this.tmp || !this.a || !this.newNonce) throw new KeyExchangeError('key exchange: set_client_DH_params before req_DH_params');
    const plain = new IGE(this.tmp.key, this.tmp.iv).decryptIge(r.encryptedData);
    const reader = new extensions.BinaryReader(plain.subarray(20));
    const inner = reader.tgReadObject();
    if (!(inner instanceof Api.ClientDHInnerData)) throw new KeyExchangeError('key exchange: no client_DH_inner_data');
    if (!sha1(plain.subarray(20, 20 + reader.tellPosition())).equals(plain.subarray(0, 20))) {
      throw new KeyExchangeError('key exchange: client_DH_inner_data hash does not match');
    }
    this.checkNonces(inner);
    // as GramJS makes it: g^ab's big-endian bytes without leading zeros
    const key = helpers.getByteArray(helpers.modExp(big(inner.gB), this.a, big(DH_PRIME)));
    const authKey = new AuthKey();
    await authKey.setKey(key);
    const answer = new Api.DhGenOk({
      nonce: inner.nonce,
      serverNonce: inner.serverNonce,
      newNonceHash1: await authKey.calcNewNonceHash(this.newNonce, 1),
    });
    this.tmp = null;
    this.a = null;
    return { answer, key };
  }
}
