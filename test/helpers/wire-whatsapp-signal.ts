// The Signal side of the project's FAKE WhatsApp Web server (wire-whatsapp-server.ts): the key
// bundles it hands out for each recipient, and the decryption of what Baileys encrypted to them
// (libsignal, the library Baileys itself encrypts with; @openclaw/crabline's server does the same
// for the direct texts its codec reads), so the server records each message's plain content.
import { Curve, generateRegistrationId, type KeyPair, proto, signedKeyPair } from '@whiskeysockets/baileys';
import { ProtocolAddress, SessionBuilder, SessionCipher, SessionRecord, type SignalStorage } from 'libsignal';

/** What the server hands out for a recipient: its identity, a signed prekey and one prekey (id 1, served again and again). */
export interface Bundle {
  identity: KeyPair;
  signed: ReturnType<typeof signedKeyPair>;
  preKey: KeyPair;
  registrationId: number;
}

/** What a device uploaded of its keys (Baileys' uploadPreKeys: an `encrypt` set), for writing to it. */
export interface DeviceKeys {
  registrationId: number;
  identity: Buffer;
  signed: { id: number; key: Buffer; signature: Buffer };
  preKey: { id: number; key: Buffer } | null;
}

/** A decrypted message: its content, and the identity key (hex, with libsignal's 05 prefix) of the device that opened the session, for a pkmsg. */
export interface Decrypted {
  message: proto.IMessage;
  identityKey: string | null;
}

const signalPublic = (k: Uint8Array) => (k.length === 33 ? Buffer.from(k) : Buffer.concat([Buffer.from([5]), k]));
const signalPair = (k: KeyPair) => ({ privKey: Buffer.from(k.private), pubKey: signalPublic(k.public) });

/** Baileys pads a message's bytes with 1–16 bytes of their own count (Utils/generics.js writeRandomPadMax16). */
function unpad(bytes: Buffer): Buffer {
  const n = bytes.at(-1) ?? 0;
  if (n < 1 || n > 16 || n > bytes.length) throw new Error('bad padding');
  return bytes.subarray(0, bytes.length - n);
}

/** A user's digits, whatever the JID's server or device: the wire server gives a person's LID the digits of their number. */
const personOf = (jid: string) => jid.split('@')[0]!.split(':')[0]!;

export class WireSignal {
  private readonly bundles = new Map<string, Bundle>();
  /** recipient → sender address → session */
  private readonly sessions = new Map<string, Map<string, Uint8Array>>();
  /** decryptions run one at a time: a session's ratchet moves with each message, in order */
  private queue: Promise<unknown> = Promise.resolve();

  /** The bundle of a recipient, made on first ask: one per person, whether asked for by phone-number JID or LID (here they share the digits). */
  bundleOf(jid: string): Bundle {
    const user = personOf(jid);
    let b = this.bundles.get(user);
    if (!b) {
      const identity = Curve.generateKeyPair();
      b = { identity, signed: signedKeyPair(identity, 1), preKey: Curve.generateKeyPair(), registrationId: generateRegistrationId() };
      this.bundles.set(user, b);
    }
    return b;
  }

  /** What `ciphertext` (an `enc` of type pkmsg or msg) from the device `sender` to `recipient` says; null when it does not decrypt. */
  decrypt(recipient: string, sender: { user: string; device: number }, type: string, ciphertext: Uint8Array): Promise<Decrypted | null> {
    const run = () => this.decryptNow(recipient, sender, type, Buffer.from(ciphertext));
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result.catch(() => null);
  }

  /** `message` from `person` (a phone-number JID) to the device, encrypted as WhatsApp relays it: an `enc` node's type and bytes. */
  encryptTo(
    person: string,
    device: { user: string; device: number },
    keys: DeviceKeys,
    message: proto.IMessage,
  ): Promise<{ type: 'pkmsg' | 'msg'; body: Buffer }> {
    const run = async () => {
      const b = this.bundleOf(person);
      const sessions = this.sessionsOf(`from:${personOf(person)}`);
      const storage = this.storage(b, sessions, () => undefined);
      const address = new ProtocolAddress(device.user, device.device);
      if (!sessions.has(address.toString()))
        await new SessionBuilder(storage, address).initOutgoing({
          registrationId: keys.registrationId,
          identityKey: signalPublic(keys.identity),
          signedPreKey: { keyId: keys.signed.id, publicKey: signalPublic(keys.signed.key), signature: keys.signed.signature },
          preKey: keys.preKey ? { keyId: keys.preKey.id, publicKey: signalPublic(keys.preKey.key) } : (undefined as never),
        });
      const plain = Buffer.concat([Buffer.from(proto.Message.encode(message).finish()), Buffer.from([1])]);
      const sealed = await new SessionCipher(storage, address).encrypt(plain);
      return { type: sealed.type === 3 ? ('pkmsg' as const) : ('msg' as const), body: Buffer.from(sealed.body, 'binary') };
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private sessionsOf(key: string): Map<string, Uint8Array> {
    let sessions = this.sessions.get(key);
    if (!sessions) this.sessions.set(key, (sessions = new Map()));
    return sessions;
  }

  private storage(b: Bundle, held: Map<string, Uint8Array>, onIdentity: (key: string) => void): SignalStorage {
    return {
      loadSession: async (id) => {
        const s = held.get(id);
        return s ? SessionRecord.deserialize(s) : undefined;
      },
      storeSession: async (id, session) => void held.set(id, session.serialize()),
      isTrustedIdentity: (_id, key) => {
        onIdentity(Buffer.from(key).toString('hex'));
        return true;
      },
      loadPreKey: async (id) => (Number(id) === 1 ? signalPair(b.preKey) : undefined),
      // kept: a fake hands its one prekey to every sender
      removePreKey: () => undefined,
      loadSignedPreKey: () => signalPair(b.signed.keyPair),
      getOurRegistrationId: () => b.registrationId,
      getOurIdentity: () => signalPair(b.identity),
    };
  }

  private async decryptNow(recipient: string, sender: { user: string; device: number }, type: string, ciphertext: Buffer): Promise<Decrypted | null> {
    const b = this.bundles.get(personOf(recipient));
    if (!b || (type !== 'pkmsg' && type !== 'msg')) return null;
    let identityKey: string | null = null;
    const storage = this.storage(b, this.sessionsOf(personOf(recipient)), (key) => (identityKey = key));
    const cipher = new SessionCipher(storage, new ProtocolAddress(sender.user, sender.device));
    const plain = type === 'pkmsg' ? await cipher.decryptPreKeyWhisperMessage(ciphertext) : await cipher.decryptWhisperMessage(ciphertext);
    return { message: proto.Message.decode(unpad(plain)), identityKey: type === 'pkmsg' ? identityKey : null };
  }
}
