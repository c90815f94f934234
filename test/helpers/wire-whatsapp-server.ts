// A FAKE WhatsApp Web server of this project's own, on the wire, for what @openclaw/crabline's
// does not serve: error acknowledgements (463, 479), pushed notifications, a `conflict` stream
// error. The real Baileys socket connects to it (WHATSAPP_WS_URL) and turns its nodes into the
// events Metronome reads, so a behaviour here is Baileys' own handling of what WhatsApp sends.
// It decrypts nothing: crabline is the judge of content. Shaped after crabline's server (MIT):
// the Noise handshake, the replayed certificate chain and the query answers below are theirs,
// rewritten on Baileys' own primitives (its binary node codec, Curve, AES-GCM, HKDF, protos).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BinaryNode, encodeBigEndian, KEY_BUNDLE_TYPE, type proto, xmppPreKey, xmppSignedPreKey } from '@whiskeysockets/baileys';
import { WebSocketServer, type WebSocket } from 'ws';
import { EMPTY, NoiseServer } from './wire-whatsapp-noise.js';

const children = (n: BinaryNode | undefined): BinaryNode[] => (Array.isArray(n?.content) ? (n.content as BinaryNode[]) : []);
const now = () => String(Math.floor(Date.now() / 1000));
import { groupNode } from './wire-whatsapp-nodes.js';
import { type DeviceKeys, WireSignal } from './wire-whatsapp-signal.js';

export { mexNotification, privacyTokenNotification, receipt, retryReceipt } from './wire-whatsapp-nodes.js';

/** A message as the server took it; `content` once decrypted (wire-whatsapp-signal.ts): undefined until then, null when it did not decrypt or is a group's. */
export interface WireMessage {
  to: string;
  id: string;
  at: number;
  mediatype: string | null;
  /** the sending account's phone number (its connection's ClientPayload) */
  from: string;
  content?: proto.IMessage | null;
  /** for a message that opened a Signal session (pkmsg): the sending device's identity key, hex */
  identityKey?: string | null;
}

/** How the server acknowledges a message the account sent: attrs added to its `ack` (`{error: '463'}`), or null for a plain ack. */
export type AckPolicy = (message: { to: string; id: string }) => Record<string, string> | null;

export interface WireServer {
  /** for WHATSAPP_WS_URL */
  url: string;
  /** the messages sent to it, in order, with the kind of media each carries (Baileys' `mediatype` on its `enc`) */
  messages: WireMessage[];
  /** how it acknowledges the next messages (default: plainly) */
  ack: AckPolicy;
  /** how long after a message its ack goes, ms (default 0: at once) */
  ackDelayMs: number;
  /** a `failure` reason to answer every handshake with instead of `success` ('401': the device was logged out); null: none */
  failure: string | null;
  /** a node pushed to every open connection (a notification, a stream error) */
  push(node: BinaryNode): Promise<void>;
  /** connections that completed the handshake so far */
  opened: number;
  /** each account's (by number) connections open now */
  live(user: string): number;
  /** the most connections of one account (by number) open at one moment, over the server's life */
  mostLive: Map<string, number>;
  /** groups it knows (jid → members' phone-number JIDs), answered to metadata queries and listings */
  groups: Map<string, string[]>;
  /** groups where only admins may post (WhatsApp's `announcement`), with their admins' JIDs */
  announce: Map<string, string[]>;
  /** what a fetch of the reach-out time lock answers (Baileys' fetchAccountReachoutTimelock); null: not locked */
  reachoutLock: { endsAt: Date; type: string } | null;
  /** what a fetch of the new-chat cap answers (fetchNewChatMessageCap), as WhatsApp's JSON */
  cap: Record<string, unknown>;
  /** the `w:mex` queries asked, by query id */
  mexQueries: string[];
  /** answer them with an error (500): Baileys' fetches of the lock and the cap throw */
  mexFails: boolean;
  /** answer device and key queries with WhatsApp's `rate-overlimit` (429) */
  overlimit: boolean;
  /** the prekeys it says it holds of a connecting device (5 or fewer: Baileys uploads some, which it keeps) */
  preKeyCount: number;
  /** a person (phone-number JID) writes `text` to the account `user` (its number), encrypted to the keys it uploaded */
  sendText(from: string, user: string, text: string): Promise<void>;
  close(): Promise<void>;
}

/** Baileys' query ids (Types/Mex.js QueryIds) for the lock and the cap. */
const MEX_REACHOUT_TIMELOCK = '23983697327930364';
const MEX_MESSAGE_CAPPING_INFO = '24503548349331633';

/** What a device's prekey upload carries (Baileys' uploadPreKeys: registration, identity, one-time keys, the signed key). */
function uploadedKeys(node: BinaryNode): DeviceKeys {
  const child = (n: BinaryNode | undefined, tag: string) => children(n).find((c) => c.tag === tag);
  const bytes = (n: BinaryNode | undefined) => Buffer.from((n?.content as Uint8Array | undefined) ?? EMPTY);
  const skey = child(node, 'skey');
  const first = children(child(node, 'list')).find((k) => k.tag === 'key');
  return {
    registrationId: bytes(child(node, 'registration')).readUInt32BE(0),
    identity: bytes(child(node, 'identity')),
    signed: { id: bytes(child(skey, 'id')).readUIntBE(0, 3), key: bytes(child(skey, 'value')), signature: bytes(child(skey, 'signature')) },
    preKey: first ? { id: bytes(child(first, 'id')).readUIntBE(0, 3), key: bytes(child(first, 'value')) } : null,
  };
}

/** Starts the fake server on a free port of 127.0.0.1. */
export async function startWireServer(): Promise<WireServer> {
  const http: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server: http, path: '/ws/chat' });
  const open = new Set<{ ws: WebSocket; noise: NoiseServer; device: { user: string; device: number } }>();
  /** what each account (by number) uploaded of its keys */
  const keysOf = new Map<string, DeviceKeys>();
  const signal = new WireSignal();
  const server: WireServer = {
    url: '',
    messages: [],
    ack: () => null,
    ackDelayMs: 0,
    failure: null,
    opened: 0,
    live: (user) => [...open].filter((c) => c.device.user === user).length,
    mostLive: new Map(),
    groups: new Map(),
    announce: new Map(),
    reachoutLock: null,
    cap: { capping_status: 'NONE' },
    mexQueries: [],
    mexFails: false,
    overlimit: false,
    preKeyCount: 50,
    sendText: async (from, user, text) => {
      const to = [...open].find((c) => c.device.user === user && keysOf.has(user));
      if (!to) throw new Error(`no open connection of ${user} with uploaded keys`);
      const enc = await signal.encryptTo(from, to.device, keysOf.get(user)!, { conversation: text });
      const node: BinaryNode = {
        tag: 'message',
        attrs: { id: `IN${Date.now().toString(16).toUpperCase()}`, from, type: 'text', t: now(), notify: 'Person' },
        content: [{ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.body }],
      };
      to.ws.send(to.noise.encode(node));
    },
    push: async (node) => {
      for (const c of open) c.ws.send(c.noise.encode(node));
    },
    close: async () => {
      for (const c of open) c.ws.terminate();
      wss.close();
      await new Promise((r) => http.close(r));
    },
  };
  const answer = (node: BinaryNode): BinaryNode => {
    const child = children(node)[0];
    const attrs = { from: node.attrs['to'] ?? 's.whatsapp.net', id: node.attrs['id']!, t: now(), type: 'result' };
    const xmlns = node.attrs['xmlns'];
    if (server.overlimit && (xmlns === 'usync' || xmlns === 'encrypt'))
      return { tag: 'iq', attrs: { ...attrs, type: 'error' }, content: [{ tag: 'error', attrs: { code: '429', text: 'rate-overlimit' } }] };
    if (xmlns === 'encrypt' && child?.tag === 'count') return { tag: 'iq', attrs, content: [{ tag: 'count', attrs: { value: String(server.preKeyCount) } }] };
    if (xmlns === 'encrypt' && child?.tag === 'key') {
      const users = children(child).filter((u) => u.tag === 'user');
      const list = users.map((u): BinaryNode => {
        const jid = u.attrs['jid']!;
        const b = signal.bundleOf(jid.replace(/:\d+@/, '@'));
        return {
          tag: 'user',
          attrs: { jid },
          content: [
            { tag: 'registration', attrs: {}, content: encodeBigEndian(b.registrationId) },
            { tag: 'type', attrs: {}, content: KEY_BUNDLE_TYPE },
            { tag: 'identity', attrs: {}, content: b.identity.public },
            xmppSignedPreKey(b.signed),
            xmppPreKey(b.preKey, 1),
          ],
        };
      });
      return { tag: 'iq', attrs, content: [{ tag: 'list', attrs: {}, content: list }] };
    }
    if (xmlns === 'usync' && child?.tag === 'usync') {
      const requested = children(children(child).find((c) => c.tag === 'list')).filter((u) => u.tag === 'user');
      const users = requested.map(
        (u): BinaryNode => ({
          tag: 'user',
          attrs: { jid: u.attrs['jid']! },
          content: [
            { tag: 'devices', attrs: {}, content: [{ tag: 'device-list', attrs: {}, content: [{ tag: 'device', attrs: { id: '0' } }] }] },
            // Baileys 7 addresses a phone number's devices by its LID: a user without one is dropped
            { tag: 'lid', attrs: { val: `${u.attrs['jid']!.split('@')[0]!.split(':')[0]}@lid` } },
          ],
        }),
      );
      const usync = {
        tag: 'usync',
        attrs: { index: '0', last: 'true', sid: child.attrs['sid'] ?? 'wire' },
        content: [{ tag: 'list', attrs: {}, content: users }],
      };
      return { tag: 'iq', attrs, content: [usync] };
    }
    if (xmlns === 'w:m' && child?.tag === 'media_conn') {
      // the upload hosts WhatsApp names (none here serves them: WHATSAPP_UPLOAD_HOST goes first)
      const host: BinaryNode = { tag: 'host', attrs: { hostname: 'media.invalid', maxContentLengthBytes: '104857600' } };
      return { tag: 'iq', attrs, content: [{ tag: 'media_conn', attrs: { auth: 'wire-auth', ttl: '3600' }, content: [host] }] };
    }
    if (xmlns === 'privacy') {
      const categories = ['readreceipts', 'profile'].map((name): BinaryNode => ({ tag: 'category', attrs: { name, value: 'all' } }));
      return { tag: 'iq', attrs, content: [{ tag: 'privacy', attrs: {}, content: categories }] };
    }
    if (xmlns === 'w:g2' && child?.tag === 'participating') {
      const groups = [...server.groups].map(([jid, members]) => groupNode(jid, members, server.announce.get(jid)));
      return { tag: 'iq', attrs, content: [{ tag: 'groups', attrs: {}, content: groups }] };
    }
    if (xmlns === 'w:g2' && child?.tag === 'query') {
      const members = server.groups.get(node.attrs['to']!);
      if (!members) return { tag: 'iq', attrs: { ...attrs, type: 'error' }, content: [{ tag: 'error', attrs: { code: '404', text: 'item-not-found' } }] };
      return { tag: 'iq', attrs, content: [groupNode(node.attrs['to']!, members, server.announce.get(node.attrs['to']!))] };
    }
    if (xmlns === 'w:mex' && child?.tag === 'query') {
      // Baileys' executeWMexQuery reads the JSON of a `result` child, under data[dataPath]
      const id = child.attrs['query_id']!;
      server.mexQueries.push(id);
      if (server.mexFails)
        return { tag: 'iq', attrs: { ...attrs, type: 'error' }, content: [{ tag: 'error', attrs: { code: '500', text: 'internal-server-error' } }] };
      const lock = server.reachoutLock;
      const data =
        id === MEX_REACHOUT_TIMELOCK
          ? {
              xwa2_fetch_account_reachout_timelock: lock
                ? { is_active: true, time_enforcement_ends: String(Math.floor(lock.endsAt.getTime() / 1000)), enforcement_type: lock.type }
                : { is_active: false, time_enforcement_ends: '0', enforcement_type: 'DEFAULT' },
            }
          : id === MEX_MESSAGE_CAPPING_INFO
            ? { xwa2_message_capping_info: server.cap }
            : {};
      return { tag: 'iq', attrs, content: [{ tag: 'result', attrs: {}, content: Buffer.from(JSON.stringify({ data })) }] };
    }
    return { tag: 'iq', attrs };
  };
  /** Decrypts the copy of a direct message meant for its recipient (not the account's own other devices). */
  const decryptFor = async (record: WireMessage, node: BinaryNode, from: { user: string; device: number }) => {
    const number = (jid: string) => jid.split('@')[0]!.split(':')[0]!;
    const tos = children(children(node).find((c) => c.tag === 'participants')).filter((t) => t.tag === 'to');
    const copies =
      tos.length > 0
        ? tos.map((t) => ({ jid: t.attrs['jid']!, enc: children(t).find((c) => c.tag === 'enc') }))
        : [{ jid: record.to, enc: children(node).find((c) => c.tag === 'enc') }];
    const mine = record.to.endsWith('@g.us') ? undefined : copies.find((c) => c.enc && number(c.jid) === number(record.to));
    const got = mine ? await signal.decrypt(mine.jid.replace(/:\d+@/, '@'), from, mine.enc!.attrs['type']!, mine.enc!.content as Uint8Array) : null;
    record.identityKey = got?.identityKey ?? null;
    record.content = got?.message ?? null;
  };
  wss.on('connection', (ws) => {
    const noise = new NoiseServer();
    let stage: 'hello' | 'finish' | 'open' = 'hello';
    const conn = { ws, noise, device: { user: '', device: 0 } };
    let device = conn.device;
    ws.on('message', async (data: Buffer) => {
      try {
        for (const f of noise.frames(data)) {
          if (stage === 'hello') {
            ws.send(noise.serverHello(f));
            stage = 'finish';
          } else if (stage === 'finish') {
            device = conn.device = noise.clientFinish(f);
            stage = 'open';
            open.add(conn);
            server.opened++;
            if (device.user) server.mostLive.set(device.user, Math.max(server.mostLive.get(device.user) ?? 0, server.live(device.user)));
            if (!device.user) {
              // a device to pair (its ClientPayload registers, names no user): WhatsApp offers QR refs
              const refs = ['wire-ref-1', 'wire-ref-2'].map((r): BinaryNode => ({ tag: 'ref', attrs: {}, content: Buffer.from(r) }));
              ws.send(
                noise.encode({
                  tag: 'iq',
                  attrs: { from: 's.whatsapp.net', type: 'set', id: 'pair-1', xmlns: 'md' },
                  content: [{ tag: 'pair-device', attrs: {}, content: refs }],
                }),
              );
              continue;
            }
            if (server.failure) {
              // how WhatsApp turns a device away after the handshake (401: logged out on the phone)
              ws.send(noise.encode({ tag: 'failure', attrs: { reason: server.failure, location: 'wire' } }));
              continue;
            }
            ws.send(noise.encode({ tag: 'success', attrs: { t: now(), lid: '100000000000001@lid' } }));
            // no messages held while offline: Baileys stops buffering its events on this
            ws.send(noise.encode({ tag: 'ib', attrs: {}, content: [{ tag: 'offline', attrs: { count: '0' } }] }));
          } else {
            const node = await noise.decode(f);
            if (node.tag === 'iq' && node.attrs['xmlns'] === 'encrypt' && node.attrs['type'] === 'set') keysOf.set(device.user, uploadedKeys(node));
            if (node.tag === 'iq') ws.send(noise.encode(answer(node)));
            else if (node.tag === 'message') {
              const m = { to: node.attrs['to']!, id: node.attrs['id']! };
              const encs = [...children(node), ...children(children(node).find((c) => c.tag === 'participants')).flatMap(children)].filter(
                (c) => c.tag === 'enc',
              );
              const record: WireMessage = {
                ...m,
                at: Date.now(),
                mediatype: encs.find((e) => e.attrs['mediatype'])?.attrs['mediatype'] ?? null,
                from: device.user,
              };
              server.messages.push(record);
              void decryptFor(record, node, device);
              const ack: BinaryNode = { tag: 'ack', attrs: { class: 'message', id: m.id, from: m.to, t: now(), ...(server.ack(m) ?? {}) } };
              setTimeout(() => ws.readyState === ws.OPEN && ws.send(noise.encode(ack)), server.ackDelayMs);
            }
          }
        }
      } catch {
        ws.terminate();
      }
    });
    ws.on('close', () => open.delete(conn));
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  server.url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}/ws/chat`;
  return server;
}
