// The Noise side of the project's FAKE WhatsApp Web server (wire-whatsapp-server.ts): the server
// half of Baileys' Noise XX handshake, then its transport (AES-GCM with counters), on Baileys'
// own primitives. Shaped after @openclaw/crabline's server (MIT).
import {
  aesDecryptGCM,
  aesEncryptGCM,
  type BinaryNode,
  Curve,
  decodeBinaryNode,
  encodeBinaryNode,
  hkdf,
  type KeyPair,
  NOISE_MODE,
  proto,
  sha256,
} from '@whiskeysockets/baileys';

// WhatsApp's own certificate chain, as crabline replays it: Baileys checks that the intermediate is
// signed by WhatsApp's root key and names its serial, and that the leaf is signed by the
// intermediate, but not that the leaf names this server's static key.
const CERT_CHAIN = Buffer.from(
  'CncKMwjjAhADGiCRKg7Kg1iu4CSulwLBaxX51Tefw6VXGgZqcr5OEbXIRiDQ04bOBijQjZ/TBhJA34Bj82jAHhLpCWBNVBlGnFDieamd8+138S57uMt9ke9mrn5r4+VepwBPKEgHjob6bR70rlCmWDkxZv+CfVjIAxJ2CjIIAxAAGiAcUamsMDmUxsjQuS6hh4pTNHZZnMWZ++o1mX2aqQzOYiCAka6+Bij/3rfcBhJAJw8pRkhTn+1IcOJQVN1OlZg6uikYnCumyO7acFVVX3U3QPXsGSq2TCbCbWrebSC593Su43EgprIDlfU8ZgWFBw==',
  'base64',
);
export const EMPTY = Buffer.alloc(0);
const iv = (counter: number) => {
  const b = Buffer.alloc(12);
  b.writeUInt32BE(counter, 8);
  return b;
};
const frame = (data: Uint8Array) => Buffer.concat([Buffer.from([(data.length >> 16) & 0xff, (data.length >> 8) & 0xff, data.length & 0xff]), data]);

/** The server side of Baileys' Noise XX handshake, then its transport (AES-GCM with counters). */
export class NoiseServer {
  private hash: Buffer;
  private salt: Buffer;
  private key: Buffer;
  private counter = 0;
  private ephemeral: KeyPair | null = null;
  private transport: { enc: Buffer; dec: Buffer; read: number; write: number } | null = null;
  private buffer = EMPTY;
  private introSkipped = false;

  constructor() {
    const mode = Buffer.from(NOISE_MODE);
    this.hash = mode.length === 32 ? mode : sha256(mode);
    this.salt = this.hash;
    this.key = this.hash;
    this.authenticate(Buffer.from([87, 65, 6, 3])); // NOISE_WA_HEADER, as the client mixes it in
  }

  /** Whole frames received so far (the client's intro header dropped first). */
  frames(data: Buffer): Buffer[] {
    let chunk = data;
    if (!this.introSkipped) {
      this.introSkipped = true;
      // 'ED' + routing info precede the header when the client has routing info
      if (chunk[0] === 0x45 && chunk[1] === 0x44) chunk = chunk.subarray(7 + chunk.readUIntBE(4, 3));
      chunk = chunk.subarray(4);
    }
    this.buffer = Buffer.concat([this.buffer, chunk]);
    const out: Buffer[] = [];
    while (this.buffer.length >= 3) {
      const size = this.buffer.readUIntBE(0, 3);
      if (this.buffer.length < size + 3) break;
      out.push(this.buffer.subarray(3, 3 + size));
      this.buffer = this.buffer.subarray(3 + size);
    }
    return out;
  }

  serverHello(clientFrame: Buffer): Buffer {
    const hello = proto.HandshakeMessage.decode(clientFrame).clientHello;
    if (!hello?.ephemeral) throw new Error('no client hello');
    this.authenticate(hello.ephemeral);
    this.ephemeral = Curve.generateKeyPair();
    const staticPair = Curve.generateKeyPair();
    this.authenticate(this.ephemeral.public);
    this.mix(Curve.sharedKey(this.ephemeral.private, hello.ephemeral));
    const staticEnc = this.encrypt(staticPair.public);
    this.mix(Curve.sharedKey(staticPair.private, hello.ephemeral));
    const payload = this.encrypt(CERT_CHAIN);
    return frame(proto.HandshakeMessage.encode({ serverHello: { ephemeral: this.ephemeral.public, static: staticEnc, payload } }).finish());
  }

  /** The end of the handshake: the device that connected (its ClientPayload's user and device). */
  clientFinish(clientFrame: Buffer): { user: string; device: number } {
    const finish = proto.HandshakeMessage.decode(clientFrame).clientFinish;
    if (!finish?.static || !finish.payload || !this.ephemeral) throw new Error('no client finish');
    const clientStatic = this.decrypt(finish.static);
    this.mix(Curve.sharedKey(this.ephemeral.private, clientStatic));
    const payload = proto.ClientPayload.decode(this.decrypt(finish.payload));
    const keys = hkdf(EMPTY, 64, { info: '', salt: this.salt });
    // the client writes with the first half and reads with the second
    this.transport = { dec: Buffer.from(keys.subarray(0, 32)), enc: Buffer.from(keys.subarray(32)), read: 0, write: 0 };
    return { user: String(payload.username ?? ''), device: payload.device ?? 0 };
  }

  async decode(data: Buffer): Promise<BinaryNode> {
    const t = this.transport!;
    return decodeBinaryNode(aesDecryptGCM(data, t.dec, iv(t.read++), EMPTY));
  }

  encode(node: BinaryNode): Buffer {
    const t = this.transport!;
    return frame(aesEncryptGCM(encodeBinaryNode(node), t.enc, iv(t.write++), EMPTY));
  }

  private authenticate(data: Uint8Array): void {
    this.hash = sha256(Buffer.concat([this.hash, data]));
  }
  private mix(data: Uint8Array): void {
    const keys = hkdf(Buffer.from(data), 64, { info: '', salt: this.salt });
    this.salt = Buffer.from(keys.subarray(0, 32));
    this.key = Buffer.from(keys.subarray(32));
    this.counter = 0;
  }
  private encrypt(plain: Uint8Array): Buffer {
    const out = aesEncryptGCM(plain, this.key, iv(this.counter++), this.hash);
    this.authenticate(out);
    return out;
  }
  private decrypt(cipher: Uint8Array): Buffer {
    const out = aesDecryptGCM(cipher, this.key, iv(this.counter++), this.hash);
    this.authenticate(cipher);
    return out;
  }
}
