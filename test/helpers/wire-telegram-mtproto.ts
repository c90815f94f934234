// A FAKE of Telegram's MTProto servers, on the wire: each data centre listens on TCP port 80 of
// a loopback address of its own, and the REAL GramJS client (TCP full transport) connects to it,
// makes an auth key with it (wire-telegram-handshake.ts; the server's RSA key is trusted through
// trustTelegramServerKey) and talks MTProto 2.0 (wire-telegram-crypto.ts). The core answers by
// itself: the key exchange, msg_container, gzip_packed, msgs_ack (ignored), ping and
// ping_delay_disconnect (pong), new_session_created for a new session, destroy_session, the
// wrappers invokeWithLayer / initConnection / invokeAfterMsg(s) / invokeWithoutUpdates (the inner
// query is what counts), help.getConfig (wire-telegram-config.ts: every DC at its address), and
// the transport error -404 for an auth key it does not know (a key is known only on the DC it
// was made on). Every other request goes to `handle`, the Telegram semantics of another file,
// whose answer goes back in rpc_result (or an rpc_error).
import { randomBytes, randomInt } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { Api, extensions, helpers } from 'telegram';
import { AuthKey } from 'telegram/crypto/AuthKey.js';
import { StringSession } from 'telegram/sessions/index.js';
import { GZIPPacked, MessageContainer, type TLMessage } from 'telegram/tl/core/index.js';
import {
  authKeyIdOf,
  type ClientMessage,
  decryptClientMessage,
  encryptServerMessage,
  FullFrames,
  frameFull,
  plainMessage,
  rpcResult,
  ServerMsgIds,
  transportError,
} from './wire-telegram-crypto.js';
import { serverConfig } from './wire-telegram-config.js';
import { KeyExchange, makeServerRsaKey, type ServerRsaKey } from './wire-telegram-handshake.js';

export interface RpcContext {
  dcId: number;
  /** decimal, GramJS's AuthKey.keyId.toString(); '0' for the key exchange's plain messages */
  authKeyId: string;
  connectionId: number;
}

/** A refusal as Telegram sends it: rpc_error with this code and message (GramJS turns it into its RPCError subclasses). */
export class RpcFailure extends Error {
  constructor(
    readonly code: number,
    readonly rpc: string,
  ) {
    super(`${code} ${rpc}`);
  }
}

/** a TL object answered in rpc_result; 'hang': never answer this request (the connection stays open); 'drop': close the connection without answering (the answer is lost) */
export type RpcAnswer = { getBytes(): Buffer } | 'hang' | 'drop';
export type RpcHandler = (ctx: RpcContext, request: Api.AnyRequest) => Promise<RpcAnswer>;

export interface MtprotoWireOptions {
  dcIds: number[];
  handle: RpcHandler;
}

interface KeyInfo {
  key: Buffer;
  dcId: number;
  salt: Buffer;
}

interface Connection {
  id: number;
  dcId: number;
  socket: Socket;
  frames: FullFrames;
  /** the transport's sequence number of the server's next packet */
  sendSeq: number;
  /** the auth key its messages came with (known or not); null before any */
  keyId: string | null;
  /** the client's session on it (its latest message's), which the server's messages carry */
  sessionId: bigint | null;
  /** content-related messages the server sent in it (for seq_no) */
  sent: number;
  /** when its session last called an API method (help.getConfig aside): Telegram sends updates to such a session; 0: never */
  calledAt: number;
  exchange: KeyExchange | null;
  /** its packets, one after another */
  chain: Promise<void>;
}

const WRAPPERS = [
  Api.InvokeWithLayer,
  Api.InitConnection,
  Api.InvokeAfterMsg,
  Api.InvokeAfterMsgs,
  Api.InvokeWithoutUpdates,
  Api.InvokeWithMessagesRange,
  Api.InvokeWithTakeout,
];

export class MtprotoWire {
  /** the server's RSA public key (PEM, spki), for trustTelegramServerKey */
  readonly serverKeyPem: string;
  /** every request handled, in order (unwrapped), with its context: the key exchange's steps (authKeyId '0'), help.getConfig and what went to `handle` */
  readonly requests: Array<{ ctx: RpcContext; request: Api.AnyRequest; at: number }> = [];
  private readonly keys = new Map<string, KeyInfo>();
  private readonly sessions = new Set<string>();
  private readonly connections = new Set<Connection>();
  private readonly accepted = new Map<string, number>();
  private readonly stalled = new Set<string>();
  private readonly msgIds = new ServerMsgIds();
  private nextConnection = 1;

  private constructor(
    private readonly dcs: Map<number, { ip: string; server: Server }>,
    private readonly rsa: ServerRsaKey,
    private readonly handle: RpcHandler,
  ) {
    this.serverKeyPem = rsa.pem;
  }

  static async start(o: MtprotoWireOptions): Promise<MtprotoWire> {
    const dcs = new Map<number, { ip: string; server: Server }>();
    const wire = new MtprotoWire(dcs, await makeServerRsaKey(), o.handle);
    try {
      for (const dcId of o.dcIds) dcs.set(dcId, await wire.listen(dcId, new Set([...dcs.values()].map((d) => d.ip))));
    } catch (err) {
      await wire.close();
      throw err;
    }
    return wire;
  }

  /** the loopback address of that DC; its port is always 80 */
  ipOf(dcId: number): string {
    const dc = this.dcs.get(dcId);
    if (!dc) throw new Error(`no DC ${dcId} on this server`);
    return dc.ip;
  }

  /** an auth key made server-side (as a finished sign-in leaves one) for that DC, known to the server from now on */
  async mintAuthKey(dcId: number): Promise<{ authKeyId: string; key: Buffer }> {
    this.ipOf(dcId);
    const key = randomBytes(256);
    key[0]! |= 0x80;
    const authKey = new AuthKey();
    await authKey.setKey(key);
    const authKeyId = authKey.keyId!.toString();
    if (authKeyId !== authKeyIdOf(key)) throw new Error('auth key id differs from GramJS');
    this.keys.set(authKeyId, { key, dcId, salt: randomBytes(8) });
    return { authKeyId, key };
  }

  /** the GramJS StringSession string of that key on that DC (built with GramJS's own StringSession + AuthKey) */
  async sessionString(dcId: number, key: Buffer): Promise<string> {
    const session = new StringSession('');
    session.setDC(dcId, this.ipOf(dcId), 80);
    const authKey = new AuthKey();
    await authKey.setKey(key);
    session.setAuthKey(authKey);
    return session.save();
  }

  /** the DC an auth key was made on */
  dcOfKey(authKeyId: string): number | null {
    return this.keys.get(authKeyId)?.dcId ?? null;
  }

  /** sends an unsolicited Updates object to every open connection of that auth key (those that sent a message yet) */
  push(authKeyId: string, updates: { getBytes(): Buffer }): void {
    for (const c of this.of(authKeyId)) this.send(c, updates.getBytes(), 'own');
  }

  /**
   * sends an Updates object as Telegram sends a user's updates: to the connection of those keys whose session called an API
   * method last (one that only connected and asked help.getConfig gets none); its connection id, or null when none is open
   */
  pushUpdates(authKeyIds: readonly string[], updates: { getBytes(): Buffer }): number | null {
    const c = this.updatesConnection(authKeyIds);
    if (c) this.send(c, updates.getBytes(), 'own');
    return c?.id ?? null;
  }

  /** the connection pushUpdates would send on now; null: none */
  updatesConnection(authKeyIds: readonly string[]): Connection | null {
    const open = authKeyIds.flatMap((id) => this.of(id)).filter((x) => x.calledAt > 0 && !this.stalled.has(x.keyId!));
    return open.sort((a, b) => b.calledAt - a.calledAt)[0] ?? null;
  }

  /** from now on the server reads but answers nothing at all (no rpc_result, no pong) on connections of that key; `false` ends it */
  stall(authKeyId: string, on = true): void {
    if (on) this.stalled.add(authKeyId);
    else this.stalled.delete(authKeyId);
  }

  /** closes every open TCP connection of that key (the client sees the connection drop) */
  dropConnections(authKeyId: string): void {
    for (const c of this.of(authKeyId)) c.socket.destroy();
  }

  /** how many TCP connections of that key are open now */
  openConnections(authKeyId: string): number {
    return this.of(authKeyId).length;
  }

  /** all TCP connections ever accepted that used that key (made it, or sent a message with it) */
  acceptedConnections(authKeyId: string): number {
    return this.accepted.get(authKeyId) ?? 0;
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.socket.destroy();
    await Promise.all([...this.dcs.values()].map((d) => new Promise<void>((resolve) => d.server.close(() => resolve()))));
  }

  private of(authKeyId: string): Connection[] {
    return [...this.connections].filter((c) => c.keyId === authKeyId && !c.socket.destroyed);
  }

  /** port 80 of a random loopback address (several jest workers run at once) */
  private async listen(dcId: number, taken: Set<string>): Promise<{ ip: string; server: Server }> {
    for (let attempt = 0; ; attempt++) {
      const ip = `127.${randomInt(100, 251)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
      if (taken.has(ip)) continue;
      const server = createServer((socket) => this.accept(dcId, socket));
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(80, ip, () => resolve());
        });
        return { ip, server };
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EACCES')
          throw new Error(
            'the fake Telegram listens on port 80 (GramJS dials it): run the tests as root, or let users bind it with `sudo sysctl net.ipv4.ip_unprivileged_port_start=80`',
          );
        if (code !== 'EADDRINUSE' || attempt >= 50) throw err;
      }
    }
  }

  private accept(dcId: number, socket: Socket): void {
    const c: Connection = {
      id: this.nextConnection++,
      dcId,
      socket,
      frames: new FullFrames(),
      sendSeq: 0,
      keyId: null,
      sessionId: null,
      sent: 0,
      calledAt: 0,
      exchange: null,
      chain: Promise.resolve(),
    };
    this.connections.add(c);
    socket.on('close', () => this.connections.delete(c));
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk) => {
      let packets: Buffer[];
      try {
        packets = c.frames.push(chunk);
      } catch (err) {
        console.error(`wire-telegram: DC ${dcId} connection ${c.id}:`, err);
        socket.destroy();
        return;
      }
      for (const p of packets) {
        c.chain = c.chain
          .then(() => (socket.destroyed ? undefined : this.packet(c, p)))
          .catch((err) => {
            console.error(`wire-telegram: DC ${dcId} connection ${c.id}:`, err);
            socket.destroy();
          });
      }
    });
  }

  private bind(c: Connection, keyId: string): void {
    if (c.keyId === keyId) return;
    c.keyId = keyId;
    this.accepted.set(keyId, (this.accepted.get(keyId) ?? 0) + 1);
  }

  private write(c: Connection, body: Buffer): void {
    if (!c.socket.destroyed) c.socket.write(frameFull(c.sendSeq++, body));
  }

  private async packet(c: Connection, body: Buffer): Promise<void> {
    if (body.length < 8) throw new Error(`a packet of ${body.length} bytes`);
    const keyId = body.readBigUInt64LE(0).toString();
    if (keyId === '0') return this.plain(c, body);
    this.bind(c, keyId);
    const info = this.keys.get(keyId);
    // as Telegram's DCs: a key is known only on the DC it was made on
    if (!info || info.dcId !== c.dcId) return this.write(c, transportError(-404));
    if (this.stalled.has(keyId)) return;
    const m = decryptClientMessage(info.key, body);
    if (!m) throw new Error(`a message under auth key ${keyId} whose msg_key does not match`);
    c.sessionId = m.sessionId;
    const session = `${keyId}:${m.sessionId}`;
    if (!this.sessions.has(session)) {
      this.sessions.add(session);
      const created = new Api.NewSessionCreated({
        firstMsgId: helpers.returnBigInt(m.msgId),
        uniqueId: helpers.readBigIntFromBuffer(randomBytes(8), true, true),
        serverSalt: helpers.readBigIntFromBuffer(info.salt, true, true),
      });
      this.send(c, created.getBytes(), 'own', false);
    }
    await this.message(c, m.msgId, new extensions.BinaryReader(m.body).tgReadObject());
  }

  /** a step of the key exchange, in a plain message */
  private async plain(c: Connection, body: Buffer): Promise<void> {
    const length = body.readInt32LE(16);
    const request = new extensions.BinaryReader(body.subarray(20, 20 + length)).tgReadObject();
    if (!KeyExchange.handles(request)) throw new Error(`a plain message that is not a step of the key exchange: ${request?.className}`);
    this.requests.push({ ctx: { dcId: c.dcId, authKeyId: '0', connectionId: c.id }, request, at: Date.now() });
    c.exchange ??= new KeyExchange(this.rsa);
    const step = await c.exchange.step(request);
    if (step.key) {
      const keyId = authKeyIdOf(step.key);
      this.keys.set(keyId, { key: step.key, dcId: c.dcId, salt: randomBytes(8) });
      this.bind(c, keyId);
      c.exchange = null;
    }
    this.write(c, plainMessage(this.msgIds.next('answer'), step.answer.getBytes()));
  }

  /** a (decrypted) message of the client: service messages answered here, requests each on their own */
  private async message(c: Connection, msgId: bigint, read: unknown): Promise<void> {
    const obj = await read;
    if (obj instanceof MessageContainer) {
      // (its `messages` are private in GramJS's typings only)
      for (const inner of (obj as unknown as { messages: TLMessage[] }).messages) await this.message(c, BigInt(inner.msgId.toString()), inner.obj);
    } else if (obj instanceof GZIPPacked) {
      await this.message(c, msgId, new extensions.BinaryReader(obj.data).tgReadObject());
    } else if (obj instanceof Api.MsgsAck) {
      // nothing to do
    } else if (obj instanceof Api.Ping || obj instanceof Api.PingDelayDisconnect) {
      this.send(c, new Api.Pong({ msgId: helpers.returnBigInt(msgId), pingId: obj.pingId }).getBytes(), 'answer');
    } else if (obj instanceof Api.DestroySession) {
      const session = `${c.keyId}:${obj.sessionId.toString()}`;
      const answer = this.sessions.delete(session)
        ? new Api.DestroySessionOk({ sessionId: obj.sessionId })
        : new Api.DestroySessionNone({ sessionId: obj.sessionId });
      this.send(c, rpcResult(msgId, answer.getBytes()), 'answer');
    } else if ((obj as { classType?: string } | null)?.classType === 'request') {
      void this.call(c, msgId, obj as Api.AnyRequest);
    } else {
      console.error(`wire-telegram: a message the fake does not take: ${(obj as { className?: string } | null)?.className ?? String(obj)}`);
    }
  }

  private async call(c: Connection, msgId: bigint, request: Api.AnyRequest): Promise<void> {
    let query: Api.AnyRequest = request;
    while (WRAPPERS.some((W) => query instanceof W)) query = (query as { query: Api.AnyRequest }).query;
    const ctx: RpcContext = { dcId: c.dcId, authKeyId: c.keyId!, connectionId: c.id };
    this.requests.push({ ctx, request: query, at: Date.now() });
    if (!(query instanceof Api.help.GetConfig)) c.calledAt = this.requests.length;
    let answer: RpcAnswer;
    try {
      answer = query instanceof Api.help.GetConfig ? serverConfig(this.dcs, c.dcId) : await this.handle(ctx, query);
    } catch (err) {
      if (err instanceof RpcFailure) answer = new Api.RpcError({ errorCode: err.code, errorMessage: err.rpc });
      else {
        console.error(`wire-telegram: handle threw on ${query.className}:`, err);
        answer = new Api.RpcError({ errorCode: 500, errorMessage: 'INTERNAL' });
      }
    }
    if (answer === 'hang') return;
    if (answer === 'drop') {
      c.socket.destroy();
      return;
    }
    this.send(c, rpcResult(msgId, answer.getBytes()), 'answer');
  }

  /** an encrypted message to the client in its session; nothing while the key is stalled */
  private send(c: Connection, body: Buffer, kind: 'answer' | 'own', contentRelated = true): void {
    if (c.socket.destroyed || c.keyId === null || c.sessionId === null || this.stalled.has(c.keyId)) return;
    const info = this.keys.get(c.keyId);
    if (!info) return;
    const seqNo = contentRelated ? c.sent++ * 2 + 1 : c.sent * 2;
    const m: ClientMessage = { salt: info.salt, sessionId: c.sessionId, msgId: this.msgIds.next(kind), seqNo, body };
    this.write(c, encryptServerMessage(info.key, m));
  }
}
