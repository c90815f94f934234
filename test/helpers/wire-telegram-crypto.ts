// The server side of MTProto 2.0 for the FAKE Telegram on the wire (wire-telegram-mtproto.ts):
// the TCP "full" transport's framing (GramJS's FullPacketCodec, from the other end), message
// encryption and decryption (the mirror of GramJS's MTProtoState.encryptMessageData /
// decryptMessageData / _calcKey) and the server's message ids.
import { createHash, randomBytes } from 'node:crypto';
import { helpers } from 'telegram';
import { IGE } from 'telegram/crypto/IGE.js';

const sha256 = (...parts: Buffer[]): Buffer => createHash('sha256').update(Buffer.concat(parts)).digest();

/** TCP full transport: length (all 12 + body), the sender's own sequence number, body, CRC32 of all before it. */
export function frameFull(seq: number, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeInt32LE(body.length + 12, 0);
  head.writeInt32LE(seq, 4);
  const data = Buffer.concat([head, body]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32LE(helpers.crc32(data), 0);
  return Buffer.concat([data, crc]);
}

/** Cuts a TCP full stream into packet bodies; throws on a bad length or checksum (the server then closes). */
export class FullFrames {
  private pending = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.pending = Buffer.concat([this.pending, chunk]);
    const bodies: Buffer[] = [];
    while (this.pending.length >= 4) {
      const length = this.pending.readInt32LE(0);
      if (length < 12 || length > 16 * 1024 * 1024) throw new Error(`bad TCP full packet length ${length}`);
      if (this.pending.length < length) break;
      const packet = this.pending.subarray(0, length);
      this.pending = this.pending.subarray(length);
      const crc = packet.readUInt32LE(length - 4);
      if (helpers.crc32(packet.subarray(0, length - 4)) !== crc) throw new Error('bad TCP full packet checksum');
      bodies.push(Buffer.from(packet.subarray(8, length - 4)));
    }
    return bodies;
  }
}

/** The transport error Telegram sends instead of a message (e.g. -404: no such auth key): a 4-byte packet. */
export function transportError(code: number): Buffer {
  const body = Buffer.alloc(4);
  body.writeInt32LE(code, 0);
  return body;
}

/** auth_key_id: the lower 64 bits of SHA-1 of the key, as GramJS's AuthKey.keyId (unsigned) in decimal. */
export function authKeyIdOf(key: Buffer): string {
  return createHash('sha1').update(key).digest().readBigUInt64LE(12).toString();
}

/** MTProto 2.0 AES key and IV of a msg_key (MTProtoState._calcKey): x = 0 from the client, 8 from the server. */
function calcKey(authKey: Buffer, msgKey: Buffer, x: 0 | 8): { key: Buffer; iv: Buffer } {
  const a = sha256(msgKey, authKey.subarray(x, x + 36));
  const b = sha256(authKey.subarray(x + 40, x + 76), msgKey);
  return {
    key: Buffer.concat([a.subarray(0, 8), b.subarray(8, 24), a.subarray(24, 32)]),
    iv: Buffer.concat([b.subarray(0, 8), a.subarray(8, 24), b.subarray(24, 32)]),
  };
}

export interface ClientMessage {
  salt: Buffer;
  sessionId: bigint;
  msgId: bigint;
  seqNo: number;
  body: Buffer;
}

/** A client's encrypted message (auth_key_id, msg_key, data) under `authKey`; null when its msg_key does not match. */
export function decryptClientMessage(authKey: Buffer, packet: Buffer): ClientMessage | null {
  if (packet.length < 24 + 32 || (packet.length - 24) % 16 !== 0) return null;
  const msgKey = packet.subarray(8, 24);
  const { key, iv } = calcKey(authKey, msgKey, 0);
  const plain = new IGE(key, iv).decryptIge(packet.subarray(24));
  if (!sha256(authKey.subarray(88, 120), plain).subarray(8, 24).equals(msgKey)) return null;
  const length = plain.readInt32LE(28);
  if (length < 0 || 32 + length > plain.length) return null;
  return {
    salt: Buffer.from(plain.subarray(0, 8)),
    sessionId: plain.readBigInt64LE(8),
    msgId: plain.readBigInt64LE(16),
    seqNo: plain.readInt32LE(24),
    body: Buffer.from(plain.subarray(32, 32 + length)),
  };
}

/** A server message to the client, encrypted (x = 8, msg_key from auth_key[96:128]), 12 to 27 bytes of padding. */
export function encryptServerMessage(authKey: Buffer, m: ClientMessage): Buffer {
  const head = Buffer.alloc(32);
  m.salt.copy(head, 0, 0, 8);
  head.writeBigInt64LE(m.sessionId, 8);
  head.writeBigInt64LE(m.msgId, 16);
  head.writeInt32LE(m.seqNo, 24);
  head.writeInt32LE(m.body.length, 28);
  const data = Buffer.concat([head, m.body]);
  const plain = Buffer.concat([data, randomBytes(12 + ((16 - ((data.length + 12) % 16)) % 16))]);
  const msgKey = sha256(authKey.subarray(96, 128), plain).subarray(8, 24);
  const { key, iv } = calcKey(authKey, msgKey, 8);
  const keyId = createHash('sha1').update(authKey).digest().subarray(12, 20);
  return Buffer.concat([keyId, msgKey, new IGE(key, iv).encryptIge(plain)]);
}

/** A plain (unencrypted) message of the key exchange: auth_key_id 0, msg_id, length, body. */
export function plainMessage(msgId: bigint, body: Buffer): Buffer {
  const head = Buffer.alloc(20);
  head.writeBigInt64LE(msgId, 8);
  head.writeInt32LE(body.length, 16);
  return Buffer.concat([head, body]);
}

/**
 * The server's msg_ids: unix time in the upper 32 bits, increasing, ≡ 1 mod 4 for an answer to
 * the client, ≡ 3 mod 4 for a message of the server's own (an update).
 */
export class ServerMsgIds {
  private last = 0n;

  next(kind: 'answer' | 'own'): bigint {
    const now = Date.now();
    let id = (BigInt(Math.floor(now / 1000)) << 32n) | (BigInt(Math.floor(((now % 1000) / 1000) * 2 ** 32)) & ~3n);
    if (id <= this.last) id = (this.last & ~3n) + 4n;
    id |= kind === 'answer' ? 1n : 3n;
    this.last = id;
    return id;
  }
}

/** rpc_result#f35c6d01 req_msg_id:long result:Object */
export function rpcResult(reqMsgId: bigint, result: Buffer): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt32LE(0xf35c6d01, 0);
  head.writeBigInt64LE(reqMsgId, 4);
  return Buffer.concat([head, result]);
}
