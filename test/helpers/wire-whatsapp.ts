// WhatsApp on the wire for the tests: @openclaw/crabline's WhatsApp Web server (MIT, written by
// others), which the real Baileys socket connects to (Noise handshake, prekey and usync
// queries), and which decrypts each direct message it is sent. It is a fake platform, named so;
// Baileys' own code runs against it unchanged. Also here: a linked session made the way an
// operator's own Baileys script makes one (useMultiFileAuthState), to import.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startWhatsAppServer } from '@openclaw/crabline';
import makeWASocket, { BufferJSON, initAuthCreds, proto, useMultiFileAuthState } from '@whiskeysockets/baileys';
import pino from 'pino';

/** One message the server accepted and acknowledged: decrypted when it was a text. */
export interface WireMessage {
  id: string;
  to: string;
  text: string | null;
  at: number;
}

/**
 * One `enc` node of a message as written on the wire: `pkmsg` (a Signal session's opening,
 * repeated until the recipient answers once) or `msg`; a pkmsg carries the sender's identity
 * key, hex with its 05 prefix.
 */
export interface WireEnc {
  id: string;
  to: string;
  type: string;
  identityKey: string | null;
  /** what kind of media the message carries (Baileys' `mediatype`), or null */
  mediatype: string | null;
  /** when the server received it (before decrypting and accepting it) */
  at: number;
}

/** A PreKeyWhisperMessage's identity key (protobuf field 3, after the version byte), as hex; read by hand: a few bytes of protobuf. */
function identityKeyOf(ciphertext: Buffer): string | null {
  let at = 1;
  const varint = (): number => {
    let n = 0;
    for (let shift = 0; at < ciphertext.length; shift += 7) {
      const b = ciphertext[at++]!;
      n += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) break;
    }
    return n;
  };
  while (at < ciphertext.length) {
    const tag = varint();
    const wire = tag & 7;
    if (wire === 0) varint();
    else if (wire === 2) {
      const len = varint();
      if (tag >> 3 === 3) return ciphertext.subarray(at, at + len).toString('hex');
      at += len;
    } else return null;
  }
  return null;
}

export interface WireWhatsApp {
  /** for WHATSAPP_WS_URL (carries the server's access token) */
  url: string;
  accepted: WireMessage[];
  encs: WireEnc[];
  close(): Promise<void>;
}

type Node = { tag?: string; attrs?: Record<string, string>; content?: unknown };
const childrenOf = (n: Node): Node[] => (Array.isArray(n.content) ? (n.content as Node[]) : []);

export async function startWireWhatsApp(): Promise<WireWhatsApp> {
  const dir = await mkdtemp(path.join(tmpdir(), 'wire-wa-'));
  const accepted: WireMessage[] = [];
  const encs: WireEnc[] = [];
  const server = await startWhatsAppServer({
    recorderPath: path.join(dir, 'whatsapp.jsonl'),
    onEvent: (e: { accepted?: boolean; body?: unknown }) => {
      const body = e.body as { key?: { id: string; remoteJid: string }; message?: { conversation?: string } } & Node;
      if (e.accepted && body?.key) accepted.push({ id: body.key.id, to: body.key.remoteJid, text: body.message?.conversation ?? null, at: Date.now() });
      else if (e.accepted && body?.attrs?.['id']) accepted.push({ id: body.attrs['id'], to: body.attrs['to'] ?? '', text: null, at: Date.now() });
      else if (!e.accepted && body?.tag === 'message') {
        const participants = childrenOf(body).find((c) => c.tag === 'participants');
        const encNodes = [...childrenOf(body), ...childrenOf(participants ?? {}).flatMap(childrenOf)].filter((c) => c.tag === 'enc');
        for (const enc of encNodes) {
          const type = enc.attrs?.['type'] ?? '';
          const bytes = (enc.content as { base64?: string } | undefined)?.base64;
          const identityKey = type === 'pkmsg' && bytes ? identityKeyOf(Buffer.from(bytes, 'base64')) : null;
          encs.push({
            id: body.attrs?.['id'] ?? '',
            to: body.attrs?.['to'] ?? '',
            type,
            identityKey,
            mediatype: enc.attrs?.['mediatype'] ?? null,
            at: Date.now(),
          });
        }
      }
    },
  });
  return {
    url: server.manifest.endpoints.baileysWebSocketUrl,
    accepted,
    encs,
    close: async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The phone's signature of a device (`account`): random bytes, which no wire server here checks. */
function deviceIdentity(): proto.IADVSignedDeviceIdentity {
  return proto.ADVSignedDeviceIdentity.fromObject({
    details: proto.ADVDeviceIdentity.encode({ rawId: 1, timestamp: Math.floor(Date.now() / 1000), keyIndex: 1 }).finish(),
    accountSignatureKey: randomBytes(32),
    accountSignature: randomBytes(64),
    deviceSignature: randomBytes(64),
  });
}

/** A device's credentials as creds.json holds them, never connected (no keys yet): a session to import. */
export function credsOnlyBundle(phone: string): { creds: unknown; keys: Record<string, unknown> } {
  const creds = initAuthCreds();
  creds.me = { id: `${phone}:7@s.whatsapp.net`, name: `phone ${phone}` };
  creds.account = deviceIdentity();
  creds.registered = true;
  return { creds: JSON.parse(JSON.stringify(creds, BufferJSON.replacer)), keys: {} };
}

/**
 * A linked device's session folder as an operator's Baileys script leaves it
 * (useMultiFileAuthState), read into the bundle `POST /v1/accounts/{id}/session` takes. The
 * script connects to `url` and writes to `chats` first, so the folder holds Signal sessions.
 * The phone's signature of the device (`account`) is random bytes: the wire server never checks it.
 */
export async function linkedSessionBundle(url: string, phone: string, chats: string[] = []): Promise<{ creds: unknown; keys: Record<string, unknown> }> {
  const folder = await mkdtemp(path.join(tmpdir(), 'wa-session-'));
  try {
    const { state, saveCreds } = await useMultiFileAuthState(folder);
    state.creds.me = { id: `${phone}:7@s.whatsapp.net`, name: `phone ${phone}` };
    state.creds.account = deviceIdentity();
    state.creds.registered = true;
    const sock = makeWASocket({
      auth: state,
      waWebSocketUrl: url,
      logger: pino({ level: 'silent' }),
      markOnlineOnConnect: false,
      syncFullHistory: false,
      // a query left unanswered when the socket ends keeps its timer (Baileys' default 60 s), and the test process with it
      defaultQueryTimeoutMs: 10_000,
    });
    sock.ev.on('creds.update', saveCreds);
    await new Promise<void>((resolve, reject) =>
      sock.ev.on('connection.update', (u) => {
        if (u.connection === 'open') resolve();
        if (u.connection === 'close') reject(u.lastDisconnect?.error ?? new Error('closed'));
      }),
    );
    for (const chat of chats) await sock.sendMessage(chat, { text: `from the script to ${chat}` });
    await saveCreds();
    // each send's keys were written before it resolved (Baileys commits its key transaction first)
    sock.end(undefined);
    const files = await readdir(folder);
    const read = async (f: string) => JSON.parse(await readFile(path.join(folder, f), 'utf8'));
    const keys: Record<string, unknown> = {};
    for (const f of files) if (f !== 'creds.json') keys[f.replace(/\.json$/, '')] = await read(f);
    return { creds: await read('creds.json'), keys };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** One file a WhatsApp socket uploaded to the media host (encrypted, as WhatsApp's hosts get them). */
export interface MediaUpload {
  kind: string;
  bytes: number;
  at: number;
}

export interface MediaHost {
  /** for WHATSAPP_UPLOAD_HOST */
  host: string;
  /** the certificate to trust (NODE_EXTRA_CA_CERTS of the process that uploads) */
  caFile: string;
  uploads: MediaUpload[];
  close(): Promise<void>;
}

/** A key and a certificate for `name` made by `openssl` in `dir` (files), for a local HTTPS stand-in. */
export function selfSignedCertificate(dir: string, name: string, altName: string): { key: string; cert: string } {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert, '-days', '1'];
  execFileSync('openssl', [...args, '-subj', `/CN=${name}`, '-addext', `subjectAltName=${altName}`], { stdio: 'ignore' });
  return { key, cert };
}

/**
 * A FAKE WhatsApp media host (crabline names 127.0.0.1:443 and serves none): HTTPS with a
 * certificate made here by `openssl`, taking Baileys' uploads (`POST /mms/<kind>/<hash>`) and
 * answering as WhatsApp's do, with the file's URL and direct path.
 */
export async function startMediaHost(): Promise<MediaHost> {
  const dir = await mkdtemp(path.join(tmpdir(), 'wa-media-'));
  const { key, cert } = selfSignedCertificate(dir, '127.0.0.1', 'IP:127.0.0.1');
  const uploads: MediaUpload[] = [];
  const server = createHttpsServer({ key: await readFile(key), cert: await readFile(cert) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const match = /^\/mms\/([a-z-]+)\/([^?]+)/.exec(req.url ?? '');
      if (req.method !== 'POST' || !match) return void res.writeHead(404).end();
      const id = randomBytes(8).toString('hex');
      uploads.push({ kind: match[1]!, bytes: Buffer.concat(chunks).length, at: Date.now() });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: `https://${host}/v/${id}`, direct_path: `/v/t62.7118-24/${id}` }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    host,
    caFile: cert,
    uploads,
    close: async () => {
      await new Promise((r) => server.close(r));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
