import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Api } from 'telegram';
import type { Account } from './wire-telegram-accounts.js';
import { type RpcAnswer, type RpcContext, RpcFailure } from './wire-telegram-mtproto.js';
import { big, num, type Peers, type ResolvedInput } from './wire-telegram-peers.js';

// The FAKE Telegram's sends (wire-telegram.ts): messages.sendMessage / sendMedia, the upload
// (upload.saveFilePart / saveBigFilePart, messages.uploadMedia), messages.setTyping and
// updates.getState, each answered as Telegram does: the refusals of the account, of the chat and
// of the kind of message, the random_id that makes a repeat answered by the first message, and
// the record a test reads (what Telegram took, by which auth key and connection).

export interface WireUserMessage {
  /** the message id Telegram gave it */
  id: number;
  authKeyId: string;
  connectionId: number;
  userId: string;
  /** as GramJS marks it: a user's id, -{id} a basic group, -100{id} a channel or supergroup */
  chatId: string;
  text: string | null;
  media: 'photo' | 'document' | null;
  randomId: string;
  /** the forum topic (the top message it replies to); null: none */
  topic: number | null;
  at: number;
}

export interface WireTyping {
  authKeyId: string;
  connectionId: number;
  userId: string;
  chatId: string;
  action: string;
  topic: number | null;
  at: number;
}

export interface WireUpload {
  userId: string;
  name: string;
  size: number;
  kind: 'photo' | 'document';
  at: number;
}

export interface ChatRefusal {
  code: number;
  message: string;
  /** refuse only texts (e.g. CHAT_SEND_PLAIN_FORBIDDEN) or only media (CHAT_SEND_MEDIA_FORBIDDEN) */
  only?: 'text' | 'media';
}

interface StoredMedia {
  kind: 'photo' | 'document';
  accessHash: bigint;
  fileReference: Buffer;
  media: Api.MessageMediaPhoto | Api.MessageMediaDocument;
}

const PART_MAX = 512 * 1024;
const BOOL_TRUE = { getBytes: () => Buffer.from([0xb5, 0x75, 0x72, 0x99]) };

export class Sends {
  readonly messages: WireUserMessage[] = [];
  readonly typing: WireTyping[] = [];
  readonly uploads: WireUpload[] = [];
  /** repeats of a random_id refused with RANDOM_ID_DUPLICATE while the first was being processed */
  duplicatesRefused = 0;
  /** repeats of a random_id answered with the first message */
  duplicatesAnswered = 0;
  readonly floodUntil = new Map<bigint, number>();
  readonly uploadFloodUntil = new Map<bigint, number>();
  readonly slowUntil = new Map<string, number>();
  readonly refusals = new Map<string, ChatRefusal>();
  readonly peerFlooded = new Set<bigint>();
  /** per account: how many more sends are taken with their answer lost, and how ('drop': the connection closes; 'hang': never answered, the connection stays open) */
  readonly dropAnswers = new Map<bigint, { left: number; how: 'drop' | 'hang' }>();
  readonly hung = new Set<bigint>();
  /** `${userId}|${peerUserId}`: who blocked whom */
  readonly blocks = new Map<string, 'by_them' | 'by_me'>();
  private readonly answered = new Map<string, Api.Updates>();
  private readonly pending = new Set<string>();
  private readonly files = new Map<string, { big: number | null; parts: Map<number, Buffer> }>();
  private readonly media = new Map<bigint, StoredMedia>();
  /** message ids: per account for users and basic groups, per channel for channels (shared by every poster) */
  private readonly boxes = new Map<string, number>();
  private readonly pts = new Map<string, number>();

  constructor(
    private readonly now: () => number,
    private readonly answerDelayMs: number,
    private readonly peers: Peers,
  ) {}

  /** The sends, uploads, typing and updates.getState; null for another method. */
  async answer(ctx: RpcContext, account: Account, request: unknown): Promise<RpcAnswer | null> {
    if (request instanceof Api.messages.SendMessage || request instanceof Api.messages.SendMedia) return this.send(ctx, account, request);
    if (request instanceof Api.upload.SaveFilePart || request instanceof Api.upload.SaveBigFilePart) return this.savePart(account, request);
    if (request instanceof Api.messages.UploadMedia) {
      this.peers.resolve(account.id, request.peer);
      return this.uploaded(account, request.media);
    }
    if (request instanceof Api.messages.SetTyping) {
      const peer = this.peers.resolve(account.id, request.peer);
      const { authKeyId, connectionId } = ctx;
      const topic = typeof request.topMsgId === 'number' ? request.topMsgId : null;
      this.typing.push({ authKeyId, connectionId, userId: `${account.id}`, chatId: peer.chatId, action: request.action.className, topic, at: this.now() });
      return BOOL_TRUE;
    }
    if (request instanceof Api.updates.GetState)
      return new Api.updates.State({ pts: this.pts.get(`${account.id}`) ?? 1, qts: 0, date: this.seconds(), seq: 0, unreadCount: 0 });
    return null;
  }

  /** A new message's id and pts in a box (the account's own for users and basic groups, a channel's): sent and received alike. */
  nextInBox(box: string): { id: number; pts: number } {
    const id = (this.boxes.get(box) ?? 0) + 1;
    this.boxes.set(box, id);
    const pts = (this.pts.get(box) ?? 1) + 1;
    this.pts.set(box, pts);
    return { id, pts };
  }

  private seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  private waitOf(until: number | undefined): number {
    return Math.max(0, Math.ceil(((until ?? 0) - this.now()) / 1000));
  }

  private async send(ctx: RpcContext, account: Account, r: Api.messages.SendMessage | Api.messages.SendMedia): Promise<RpcAnswer> {
    const user = account.id;
    // Telegram never got to process it: nothing recorded, nothing answered
    if (this.hung.has(user)) return 'hang';
    if (account.state === 'frozen') throw new RpcFailure(420, 'FROZEN_METHOD_INVALID');
    if (account.state === 'restricted') throw new RpcFailure(403, 'USER_RESTRICTED');
    const flood = this.waitOf(this.floodUntil.get(user));
    if (flood > 0) throw new RpcFailure(420, `FLOOD_WAIT_${flood}`);
    const peer = this.peers.resolve(user, r.peer);
    const isMedia = r instanceof Api.messages.SendMedia;
    const randomId = String(r.randomId);
    const key = `${user}|${peer.chatId}|${randomId}`;
    if (this.pending.has(key)) {
      this.duplicatesRefused++;
      throw new RpcFailure(500, 'RANDOM_ID_DUPLICATE');
    }
    const first = this.answered.get(key);
    if (first) {
      this.duplicatesAnswered++;
      return first;
    }
    this.refuse(account, peer, isMedia);
    const text = r.message ?? '';
    if (!isMedia && text.trim() === '') throw new RpcFailure(400, 'MESSAGE_EMPTY');
    if (!isMedia && text.length > 4096) throw new RpcFailure(400, 'MESSAGE_TOO_LONG');
    if (isMedia && text.length > 1024) throw new RpcFailure(400, 'MEDIA_CAPTION_TOO_LONG');
    const media = isMedia ? this.mediaOf(account, r.media) : null;
    const topic = r.replyTo instanceof Api.InputReplyToMessage ? r.replyTo.replyToMsgId : null;
    const isChannel = peer.kind === 'channel' || peer.kind === 'supergroup';
    const { id, pts } = this.nextInBox(isChannel ? peer.chatId : `${user}`);
    const kind = media instanceof Api.MessageMediaPhoto ? 'photo' : media ? 'document' : null;
    const { authKeyId, connectionId } = ctx;
    const at = this.now();
    this.messages.push({
      id,
      authKeyId,
      connectionId,
      userId: `${user}`,
      chatId: peer.chatId,
      text: text || null,
      media: kind,
      randomId,
      topic,
      at,
    });
    const updates = this.updatesOf(account, peer, r, { id, pts, text, media, topic });
    this.pending.add(key);
    if (this.answerDelayMs > 0) await sleep(this.answerDelayMs);
    this.pending.delete(key);
    this.answered.set(key, updates);
    const lose = this.dropAnswers.get(user);
    if (lose && lose.left > 0) {
      lose.left--;
      return lose.how;
    }
    return updates;
  }

  /** The refusals of the account, the chat and the kind of message, in the order Telegram meets them. */
  private refuse(account: Account, peer: ResolvedInput, isMedia: boolean): void {
    const user = account.id;
    if (this.peerFlooded.has(user)) throw new RpcFailure(400, 'PEER_FLOOD');
    const toUser = peer.kind === 'user';
    const self = toUser && peer.id === user;
    if (account.state === 'spam_limited') {
      // a spam-limited account may write to groups only where it is not limited, and to its contacts only
      if (!toUser) throw new RpcFailure(400, 'USER_BANNED_IN_CHANNEL');
      const dialog = this.peers.membership(user, peer.chatId);
      if (!self && !(dialog?.kind === 'user' && dialog.contact)) throw new RpcFailure(400, 'PEER_FLOOD');
    }
    if (toUser) {
      const block = this.blocks.get(`${user}|${peer.id}`);
      if (block === 'by_me') throw new RpcFailure(400, 'YOU_BLOCKED_USER');
      if (block === 'by_them') throw new RpcFailure(400, 'USER_IS_BLOCKED');
    } else {
      const chat = this.peers.chat(peer.chatId)!;
      const mine = this.peers.membership(user, peer.chatId) as typeof chat | null;
      const admin = mine?.creator === true || mine?.admin === true;
      if (!mine) {
        if (chat.kind === 'group' || !chat.username) throw new RpcFailure(406, 'CHANNEL_PRIVATE');
        throw new RpcFailure(403, chat.kind === 'channel' ? 'CHAT_ADMIN_REQUIRED' : 'CHAT_GUEST_SEND_FORBIDDEN');
      }
      if (chat.kind === 'channel' && !admin) throw new RpcFailure(403, 'CHAT_ADMIN_REQUIRED');
      if (chat.kind !== 'channel' && !admin && chat.sendBanned) throw new RpcFailure(403, 'CHAT_WRITE_FORBIDDEN');
      if (chat.kind !== 'channel' && !admin && isMedia && chat.mediaBanned) throw new RpcFailure(403, 'CHAT_SEND_MEDIA_FORBIDDEN');
    }
    const slow = this.waitOf(this.slowUntil.get(`${user}|${peer.chatId}`));
    if (slow > 0) throw new RpcFailure(420, `SLOWMODE_WAIT_${slow}`);
    const refusal = this.refusals.get(`${user}|${peer.chatId}`);
    if (refusal && (!refusal.only || (refusal.only === 'media') === isMedia)) throw new RpcFailure(refusal.code, refusal.message);
  }

  private updatesOf(
    account: Account,
    peer: ResolvedInput,
    r: Api.messages.SendMessage | Api.messages.SendMedia,
    m: { id: number; pts: number; text: string; media: Api.TypeMessageMedia | null; topic: number | null },
  ): Api.Updates {
    const isChannel = peer.kind === 'channel' || peer.kind === 'supergroup';
    const peerId =
      peer.kind === 'user'
        ? new Api.PeerUser({ userId: big(peer.id) })
        : peer.kind === 'group'
          ? new Api.PeerChat({ chatId: big(peer.id) })
          : new Api.PeerChannel({ channelId: big(peer.id) });
    const chat = isChannel ? this.peers.chat(peer.chatId) : null;
    const message = new Api.Message({
      id: m.id,
      out: true,
      peerId,
      // a broadcast channel's post is the channel's; elsewhere in a group it is the account's
      ...(peer.kind === 'group' || peer.kind === 'supergroup' ? { fromId: new Api.PeerUser({ userId: big(account.id) }) } : {}),
      date: this.seconds(),
      message: m.text,
      ...(m.media && { media: m.media }),
      ...(m.topic !== null && {
        replyTo: new Api.MessageReplyHeader({ replyToMsgId: m.topic, forumTopic: chat?.kind === 'supergroup' && chat.forum === true }),
      }),
    });
    const update = isChannel
      ? new Api.UpdateNewChannelMessage({ message, pts: m.pts, ptsCount: 1 })
      : new Api.UpdateNewMessage({ message, pts: m.pts, ptsCount: 1 });
    const users = [account.id, ...(peer.kind === 'user' && peer.id !== account.id ? [peer.id] : [])].map((id) => this.peers.userObject(account.id, id));
    const chats = peer.kind === 'user' ? [] : [this.peers.chatObject(account.id, peer.chatId)];
    return new Api.Updates({ updates: [new Api.UpdateMessageID({ id: m.id, randomId: r.randomId! }), update], users, chats, date: this.seconds(), seq: 0 });
  }

  /** upload.saveFilePart / saveBigFilePart: the part kept, or FLOOD_WAIT_X and the part limits */
  private savePart(account: Account, r: Api.upload.SaveFilePart | Api.upload.SaveBigFilePart): { getBytes(): Buffer } {
    const flood = this.waitOf(this.uploadFloodUntil.get(account.id));
    if (flood > 0) throw new RpcFailure(420, `FLOOD_WAIT_${flood}`);
    const isBig = r instanceof Api.upload.SaveBigFilePart;
    const total = isBig ? r.fileTotalParts : null;
    if (total !== null && (total < 1 || total > 8000)) throw new RpcFailure(400, 'FILE_PARTS_INVALID');
    if (r.filePart < 0 || r.filePart >= (total ?? 4000)) throw new RpcFailure(400, 'FILE_PART_INVALID');
    const bytes = Buffer.from(r.bytes);
    if (bytes.length === 0) throw new RpcFailure(400, 'FILE_PART_EMPTY');
    if (bytes.length > PART_MAX) throw new RpcFailure(400, 'FILE_PART_TOO_BIG');
    if (isBig && r.filePart < total! - 1 && (bytes.length % 1024 !== 0 || PART_MAX % bytes.length !== 0)) throw new RpcFailure(400, 'FILE_PART_SIZE_INVALID');
    const key = `${account.id}|${r.fileId.toString()}`;
    const file = this.files.get(key) ?? { big: total, parts: new Map<number, Buffer>() };
    // every part of a big file names the same count of parts
    if (file.big !== total) throw new RpcFailure(400, 'FILE_PARTS_INVALID');
    file.parts.set(r.filePart, bytes);
    this.files.set(key, file);
    return BOOL_TRUE;
  }

  /** an uploaded file's bytes: every part there (FILE_PART_X_MISSING), as many as the InputFile says */
  private fileOf(account: Account, input: Api.TypeInputFile): { name: string; bytes: Buffer } {
    if (!(input instanceof Api.InputFile) && !(input instanceof Api.InputFileBig)) throw new RpcFailure(400, 'MEDIA_INVALID');
    const file = this.files.get(`${account.id}|${input.id.toString()}`);
    if (input.parts < 1 || (file && (file.big !== null) !== input instanceof Api.InputFileBig)) throw new RpcFailure(400, 'FILE_PARTS_INVALID');
    if (file?.big !== null && file?.big !== undefined && file.big !== input.parts) throw new RpcFailure(400, 'FILE_PARTS_INVALID');
    const parts: Buffer[] = [];
    for (let i = 0; i < input.parts; i++) {
      const part = file?.parts.get(i);
      if (!part) throw new RpcFailure(400, `FILE_PART_${i}_MISSING`);
      parts.push(part);
    }
    return { name: input.name, bytes: Buffer.concat(parts) };
  }

  /** messages.uploadMedia: an uploaded photo or document becomes one with an id, access hash and file reference */
  private uploaded(account: Account, input: Api.TypeInputMedia): Api.MessageMediaPhoto | Api.MessageMediaDocument {
    if (!(input instanceof Api.InputMediaUploadedPhoto) && !(input instanceof Api.InputMediaUploadedDocument)) throw new RpcFailure(400, 'MEDIA_INVALID');
    const { name, bytes } = this.fileOf(account, input.file);
    const isPhoto = input instanceof Api.InputMediaUploadedPhoto;
    // Telegram makes a photo of a JPEG, PNG or WebP image only
    if (isPhoto && !isImage(bytes)) throw new RpcFailure(400, 'IMAGE_PROCESS_FAILED');
    const id = randomBytes(8).readBigInt64LE(0);
    const fields = { id: big(id), accessHash: big(randomBytes(8).readBigInt64LE(0)), fileReference: randomBytes(12), date: this.seconds(), dcId: account.dcId };
    const media = isPhoto
      ? new Api.MessageMediaPhoto({ photo: new Api.Photo({ ...fields, sizes: [new Api.PhotoSize({ type: 'x', w: 800, h: 600, size: bytes.length })] }) })
      : new Api.MessageMediaDocument({
          document: new Api.Document({ ...fields, mimeType: input.mimeType, size: big(bytes.length), attributes: input.attributes }),
        });
    this.media.set(id, { kind: isPhoto ? 'photo' : 'document', accessHash: num(fields.accessHash), fileReference: fields.fileReference, media });
    this.uploads.push({ userId: `${account.id}`, name, size: bytes.length, kind: isPhoto ? 'photo' : 'document', at: this.now() });
    return media;
  }

  /** a send's media: a photo or document Telegram has (id and access hash; its file reference), or one uploaded with the send */
  private mediaOf(account: Account, input: Api.TypeInputMedia): Api.TypeMessageMedia {
    if (input instanceof Api.InputMediaUploadedPhoto || input instanceof Api.InputMediaUploadedDocument) return this.uploaded(account, input);
    const ref = input instanceof Api.InputMediaPhoto ? input.id : input instanceof Api.InputMediaDocument ? input.id : null;
    if (!ref) throw new RpcFailure(400, 'MEDIA_INVALID');
    if (!(ref instanceof Api.InputPhoto) && !(ref instanceof Api.InputDocument)) throw new RpcFailure(400, 'MEDIA_EMPTY');
    const stored = this.media.get(num(ref.id));
    const kind = ref instanceof Api.InputPhoto ? 'photo' : 'document';
    if (!stored || stored.kind !== kind || stored.accessHash !== num(ref.accessHash)) throw new RpcFailure(400, 'MEDIA_EMPTY');
    if (!stored.fileReference.equals(Buffer.from(ref.fileReference))) throw new RpcFailure(400, 'FILE_REFERENCE_EXPIRED');
    return stored.media;
  }
}

function isImage(b: Buffer): boolean {
  const jpeg = b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
  const png = b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  const webp = b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP';
  return jpeg || png || webp;
}
