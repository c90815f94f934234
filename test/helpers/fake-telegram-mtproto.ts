import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Api, extensions, helpers, utils } from 'telegram';

// A FAKE Telegram for user accounts (MTProto), answering the FAKE GramJS client
// (fake-gramjs-client.mjs) over HTTP. It keeps what a test asks about: each account's messages
// per chat with their random_id, uploads, typing, connections; and answers as Telegram does:
// a repeated random_id is answered with the first send's message (nothing posted twice), FLOOD_WAIT_X, SLOWMODE_WAIT_X,
// PEER_FLOOD, a chat's refusal, a revoked session's AUTH_KEY_UNREGISTERED, and the sign-in's
// PHONE_CODE_INVALID / PHONE_CODE_EXPIRED / SESSION_PASSWORD_NEEDED / PASSWORD_HASH_INVALID /
// PHONE_NUMBER_BANNED.

export interface FakeUserMessage {
  session: string;
  userId: string;
  chatId: string;
  text: string | null;
  media: string | null;
  randomId: string;
  /** the forum topic it was posted into (a reply to the topic's top message); null: none */
  topic: number | null;
  at: number;
  /** the process that sent it */
  pid: number;
  /** the message id Telegram gave it */
  id: number;
}

interface User {
  id: string;
  phone: string;
  password: string | null;
  banned: boolean;
}

interface Session {
  phone: string | null;
  /** the QR login token shown, and the user who scanned it */
  qrToken?: string;
  qrScannedBy?: string;
  userId: string | null;
  revoked: boolean;
}

interface RpcError {
  code: number;
  message: string;
}

class Refusal extends Error {
  constructor(
    readonly code: number,
    readonly rpc: string,
  ) {
    super(rpc);
  }
}

export class FakeTelegramMtproto {
  readonly messages: FakeUserMessage[] = [];
  readonly typing: Array<{ session: string; chatId: string; action: string }> = [];
  readonly uploads: Array<{ userId: string; name: string }> = [];
  readonly connects: string[] = [];
  private readonly users = new Map<string, User>();
  private readonly sessions = new Map<string, Session>();
  private readonly codes = new Map<string, { hash: string; code: string; expired: boolean }>();
  private readonly floodUntil = new Map<string, number>();
  private readonly slowUntil = new Map<string, number>();
  private readonly chatRefusals = new Map<string, RpcError>();
  private readonly peerFlooded = new Set<string>();
  private readonly dialogsOf = new Map<string, unknown[]>();
  /** sends whose answer is lost after Telegram took them (the connection drops): per user, how many more */
  private readonly dropAnswers = new Map<string, number>();
  /** repeats of a random_id answered with the first send's message */
  duplicatesRefused = 0;
  private server: Server | null = null;
  private nextUser = 5_000_000;
  private nextMessage = 1;
  url = '';

  constructor(
    private readonly now: () => number = Date.now,
    /** how long a taken send waits before its answer, ms: a sender killed meanwhile leaves it unanswered */
    private readonly answerDelayMs = 0,
  ) {}

  async listen(): Promise<string> {
    this.server = createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** A Telegram user with this phone number; `password`: two-step verification. */
  addUser(phone: string, opts: { password?: string; banned?: boolean } = {}): string {
    const id = String(this.nextUser++);
    this.users.set(phone, { id, phone, password: opts.password ?? null, banned: opts.banned ?? false });
    return id;
  }

  /** A session already signed in as the user of `phone` (as a finished sign-in leaves). */
  signedInSession(phone: string): string {
    const user = this.users.get(phone)!;
    const session = `fake-session-${randomBytes(12).toString('hex')}`;
    this.sessions.set(session, { phone, userId: user.id, revoked: false });
    return session;
  }

  userOf(session: string): string | null {
    return this.sessions.get(session)?.userId ?? null;
  }

  /** The code the phone's Telegram app shows for the last sendCode. */
  codeOf(phone: string): string | null {
    return this.codes.get(phone)?.code ?? null;
  }

  /** Whether the last code sent to `phone` has not expired. */
  codeValid(phone: string): boolean {
    const c = this.codes.get(phone);
    return c !== undefined && !c.expired;
  }

  expireCode(phone: string): void {
    const c = this.codes.get(phone);
    if (c) c.expired = true;
  }

  /** The session is ended on the phone (Settings → Devices). */
  revoke(session: string): void {
    this.sessions.get(session)!.revoked = true;
  }

  flood(userId: string, seconds: number): void {
    this.floodUntil.set(userId, this.now() + seconds * 1000);
  }

  slowMode(userId: string, chatId: string, seconds: number): void {
    this.slowUntil.set(`${userId}|${chatId}`, this.now() + seconds * 1000);
  }

  refuseChat(userId: string, chatId: string, message: string, code = 403): void {
    this.chatRefusals.set(`${userId}|${chatId}`, { code, message });
  }

  peerFlood(userId: string): void {
    this.peerFlooded.add(userId);
  }

  setDialogs(userId: string, dialogs: unknown[]): void {
    this.dialogsOf.set(userId, dialogs);
  }

  /** The next `count` sends of the user are taken, and their answers lost (the connection drops). */
  loseAnswers(userId: string, count: number): void {
    this.dropAnswers.set(userId, count);
  }

  messagesOf(userId: string): FakeUserMessage[] {
    return this.messages.filter((m) => m.userId === userId);
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, string>;
    try {
      const answer = this.route(req.url ?? '', body);
      if (this.answerDelayMs > 0 && req.url === '/rpc') await new Promise((resolve) => setTimeout(resolve, this.answerDelayMs));
      if (answer === 'drop') {
        res.socket?.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: error.code, message: error.rpc } }));
    }
  }

  private route(path: string, body: Record<string, string>): unknown {
    const session = body['session'] ?? '';
    if (!this.sessions.has(session)) this.sessions.set(session, { phone: null, userId: null, revoked: false });
    const s = this.sessions.get(session)!;
    switch (path) {
      case '/connect':
        this.connects.push(session);
        return {};
      case '/disconnect':
        return {};
      case '/sign-in/send-code':
        return this.sendCode(s, body['phone']!);
      case '/sign-in/code':
        return this.signIn(s, body['phone']!, body['phoneCodeHash']!, body['code']!);
      case '/sign-in/qr':
        return this.qrLogin(s);
      case '/sign-in/password':
        return this.checkPassword(s, body['password']!);
    }
    const user = this.authorized(s);
    switch (path) {
      case '/me':
        return { user: { id: user.id, phone: user.phone } };
      case '/entity':
        return { peer: tl(peerOf(body['chatId']!)) };
      case '/upload':
        return { file: tl(new Api.InputFile({ id: helpers.generateRandomLong(), parts: 1, name: body['name']!, md5Checksum: '' })) };
      case '/dialogs':
        return { dialogs: this.dialogsOf.get(user.id) ?? [] };
      case '/rpc':
        return this.rpc(session, user, new extensions.BinaryReader(Buffer.from(body['request']!, 'base64')).tgReadObject(), Number(body['pid']));
    }
    throw new Refusal(400, 'METHOD_INVALID');
  }

  private sendCode(s: Session, phone: string): unknown {
    const user = this.users.get(phone);
    if (!user) throw new Refusal(400, 'PHONE_NUMBER_INVALID');
    if (user.banned) throw new Refusal(400, 'PHONE_NUMBER_BANNED');
    const code = String(10_000 + Math.floor(Math.random() * 89_999));
    const hash = randomBytes(8).toString('hex');
    this.codes.set(phone, { hash, code, expired: false });
    s.phone = phone;
    return { phoneCodeHash: hash };
  }

  private signIn(s: Session, phone: string, hash: string, code: string): unknown {
    const sent = this.codes.get(phone);
    if (!sent || sent.hash !== hash || s.phone !== phone) throw new Refusal(400, 'PHONE_CODE_HASH_EMPTY');
    if (sent.expired) throw new Refusal(400, 'PHONE_CODE_EXPIRED');
    if (sent.code !== code) throw new Refusal(400, 'PHONE_CODE_INVALID');
    const user = this.users.get(phone)!;
    this.codes.delete(phone);
    if (user.password !== null) return { passwordNeeded: true };
    s.userId = user.id;
    return { passwordNeeded: false };
  }

  /** The phone of `phone` scans the QR code of the session that shows `token`. */
  scanQr(token: Buffer, phone: string): void {
    const s = [...this.sessions.values()].find((x) => x.qrToken === token.toString('hex'));
    if (!s) throw new Error('no session shows this QR token');
    s.qrScannedBy = phone;
  }

  private qrLogin(s: Session): unknown {
    if (s.qrScannedBy) {
      const user = this.users.get(s.qrScannedBy)!;
      s.phone = user.phone;
      if (user.password !== null) throw new Refusal(401, 'SESSION_PASSWORD_NEEDED');
      s.userId = user.id;
      return { signedIn: true };
    }
    s.qrToken = randomBytes(16).toString('hex');
    return { token: s.qrToken, expiresAt: this.now() + 30_000 };
  }

  private checkPassword(s: Session, password: string): unknown {
    const user = s.phone ? this.users.get(s.phone) : undefined;
    if (!user || user.password === null) throw new Refusal(400, 'PASSWORD_EMPTY');
    if (user.password !== password) throw new Refusal(400, 'PASSWORD_HASH_INVALID');
    s.userId = user.id;
    return {};
  }

  private authorized(s: Session): User {
    if (s.revoked) throw new Refusal(401, 'AUTH_KEY_UNREGISTERED');
    const user = [...this.users.values()].find((u) => u.id === s.userId);
    if (!user) throw new Refusal(401, 'AUTH_KEY_UNREGISTERED');
    if (user.banned) throw new Refusal(401, 'USER_DEACTIVATED_BAN');
    return user;
  }

  private rpc(session: string, user: User, request: Api.AnyRequest, pid: number): unknown {
    if (request instanceof Api.messages.SetTyping) {
      this.typing.push({ session, chatId: utils.getPeerId(request.peer), action: request.action.className });
      return {};
    }
    // the parts of an upload (the transport uploads part by part through invoke)
    if (request instanceof Api.upload.SaveFilePart || request instanceof Api.upload.SaveBigFilePart) return {};
    if (request instanceof Api.messages.UploadMedia) {
      const file = (request.media as Api.InputMediaUploadedPhoto).file as Api.InputFile;
      this.uploads.push({ userId: user.id, name: file.name });
      const fields = { id: helpers.generateRandomLong(), accessHash: helpers.generateRandomLong(), fileReference: randomBytes(8), date: 0, dcId: 2 };
      const answer =
        request.media instanceof Api.InputMediaUploadedPhoto
          ? new Api.MessageMediaPhoto({ photo: new Api.Photo({ ...fields, sizes: [] }) })
          : new Api.MessageMediaDocument({
              document: new Api.Document({ ...fields, mimeType: 'application/octet-stream', size: helpers.returnBigInt(1), attributes: [] }),
            });
      return { result: tl(answer) };
    }
    if (!(request instanceof Api.messages.SendMessage) && !(request instanceof Api.messages.SendMedia)) throw new Refusal(400, 'METHOD_INVALID');
    const chatId = utils.getPeerId(request.peer);
    const now = this.now();
    const flood = this.floodUntil.get(user.id) ?? 0;
    if (flood > now) throw new Refusal(420, `FLOOD_WAIT_${Math.ceil((flood - now) / 1000)}`);
    const slow = this.slowUntil.get(`${user.id}|${chatId}`) ?? 0;
    if (slow > now) throw new Refusal(420, `SLOWMODE_WAIT_${Math.ceil((slow - now) / 1000)}`);
    if (this.peerFlooded.has(user.id)) throw new Refusal(400, 'PEER_FLOOD');
    const refusal = this.chatRefusals.get(`${user.id}|${chatId}`);
    if (refusal) throw new Refusal(refusal.code, refusal.message);
    const randomId = String(request.randomId);
    const first = this.messages.find((m) => m.userId === user.id && m.randomId === randomId);
    if (first) {
      // as Telegram answers a repeat: the first send's message, nothing posted again
      this.duplicatesRefused++;
      return { result: tl(sentUpdates(first.id, request.randomId, now)) };
    }
    const media = request instanceof Api.messages.SendMedia ? request.media.className : null;
    const topic = request.replyTo instanceof Api.InputReplyToMessage ? request.replyTo.replyToMsgId : null;
    const id = this.nextMessage++;
    this.messages.push({ session, userId: user.id, chatId, text: request.message || null, media, randomId, topic, at: now, pid, id });
    const lose = this.dropAnswers.get(user.id) ?? 0;
    if (lose > 0) {
      this.dropAnswers.set(user.id, lose - 1);
      return 'drop';
    }
    return { result: tl(sentUpdates(id, request.randomId, now)) };
  }
}

function sentUpdates(id: number, randomId: Api.long | undefined, now: number): Api.Updates {
  return new Api.Updates({ updates: [new Api.UpdateMessageID({ id, randomId })], users: [], chats: [], date: Math.floor(now / 1000), seq: 0 });
}

function tl(object: { getBytes(): Buffer }): string {
  return Buffer.from(object.getBytes()).toString('base64');
}

/** The InputPeer a marked chat id names: `-100{id}` a channel, `-{id}` a basic group, else a user. */
function peerOf(chatId: string): Api.TypeInputPeer {
  if (!/^-?\d+$/.test(chatId)) throw new Refusal(400, 'USERNAME_NOT_OCCUPIED');
  const zero = helpers.returnBigInt(0);
  if (chatId.startsWith('-100')) return new Api.InputPeerChannel({ channelId: helpers.returnBigInt(chatId.slice(4)), accessHash: zero });
  if (chatId.startsWith('-')) return new Api.InputPeerChat({ chatId: helpers.returnBigInt(chatId.slice(1)) });
  return new Api.InputPeerUser({ userId: helpers.returnBigInt(chatId), accessHash: zero });
}
