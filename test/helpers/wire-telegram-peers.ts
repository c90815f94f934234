import { createHmac, randomBytes } from 'node:crypto';
import { Api, helpers } from 'telegram';
import { RpcFailure } from './wire-telegram-mtproto.js';

// The FAKE Telegram's peers (wire-telegram.ts): users, basic groups, channels and supergroups,
// each account's dialogs with its rights in them, usernames, and access hashes as Telegram
// gives them: one per account and peer, so a hash from another account, or 0, is refused
// (CHANNEL_INVALID, PEER_ID_INVALID); a basic group needs none. Answers users.getUsers,
// channels.getChannels, contacts.resolveUsername and messages.getDialogs.

/**
 * One of an account's dialogs. `id` is Telegram's bare id; the chat id a send names (and the
 * record keeps) is marked: a user's id, `-{id}` for a basic group, `-100{id}` for a channel or supergroup.
 */
export type DialogSpec =
  | { kind: 'user'; id: string; firstName: string; lastName?: string; username?: string; phone?: string; contact?: boolean; bot?: boolean }
  | {
      kind: 'group';
      id: string;
      title: string;
      members?: number;
      creator?: boolean;
      admin?: boolean;
      /** the group's default rights forbid members to send (defaultBannedRights.send_messages) */
      sendBanned?: boolean;
      mediaBanned?: boolean;
    }
  | {
      /** a broadcast channel (only admins post) or a supergroup (megagroup) */
      kind: 'channel' | 'supergroup';
      id: string;
      title: string;
      username?: string;
      members?: number;
      creator?: boolean;
      admin?: boolean;
      sendBanned?: boolean;
      mediaBanned?: boolean;
      forum?: boolean;
    };

export type PeerKind = DialogSpec['kind'];

/** A peer as a send names it, after its access hash was checked. */
export interface ResolvedInput {
  chatId: string;
  kind: PeerKind;
  id: bigint;
}

/** A user of the fake: an account that signs in, or anyone named in a dialog. */
interface UserEntity {
  id: bigint;
  firstName: string;
  lastName?: string;
  username?: string;
  phone?: string;
  bot?: boolean;
}

export const big = (x: bigint | number | string): Api.long => helpers.returnBigInt(x.toString());
export const num = (x: { toString(): string }): bigint => BigInt(x.toString());

/** A chat's marked id (the id GramJS's getPeerId gives and sends are recorded by). */
export function markedId(kind: PeerKind, id: bigint | string): string {
  return kind === 'user' ? `${id}` : kind === 'group' ? `-${id}` : `-100${id}`;
}

/** Vector<T> as an RPC answer (vector#1cb5c415, its length, the items). */
export function vector(items: Array<{ getBytes(): Buffer }>): { getBytes(): Buffer } {
  return {
    getBytes: () => {
      const head = Buffer.alloc(8);
      head.writeUInt32LE(0x1cb5c415, 0);
      head.writeInt32LE(items.length, 4);
      return Buffer.concat([head, ...items.map((i) => Buffer.from(i.getBytes()))]);
    },
  };
}

export class Peers {
  private readonly users = new Map<bigint, UserEntity>();
  /** basic groups, channels and supergroups by marked id: their last definition */
  private readonly chats = new Map<string, Exclude<DialogSpec, { kind: 'user' }>>();
  private readonly dialogs = new Map<bigint, DialogSpec[]>();
  private readonly secret = randomBytes(32);

  constructor(private readonly now: () => number) {}

  addUser(user: UserEntity): void {
    this.users.set(user.id, user);
  }

  /** The account's dialogs, newest first; each peer is known to the fake from now on (ResolveUsername finds it). */
  setDialogs(viewer: bigint, dialogs: DialogSpec[]): void {
    for (const d of dialogs) {
      if (d.kind === 'user') {
        // a known user (an account of the fake) keeps what the dialog does not say
        const known = this.users.get(BigInt(d.id));
        this.users.set(BigInt(d.id), {
          id: BigInt(d.id),
          firstName: d.firstName,
          lastName: d.lastName ?? known?.lastName,
          username: d.username ?? known?.username,
          phone: known?.phone ?? d.phone,
          bot: d.bot ?? known?.bot,
        });
      } else this.chats.set(markedId(d.kind, d.id), d);
    }
    this.dialogs.set(viewer, [...dialogs]);
  }

  /** The access hash `viewer` is given for a user or channel (marked id); the same every time, another for another account. */
  accessHash(viewer: bigint, chatId: string): bigint {
    const mac = createHmac('sha256', this.secret).update(`${viewer}|${chatId}`).digest();
    return mac.readBigInt64LE(0) || 1n;
  }

  /** The viewer's dialog with this chat (its membership and rights), or null. */
  membership(viewer: bigint, chatId: string): DialogSpec | null {
    return this.dialogs.get(viewer)?.find((d) => markedId(d.kind, d.id) === chatId) ?? null;
  }

  chat(chatId: string): Exclude<DialogSpec, { kind: 'user' }> | null {
    return this.chats.get(chatId) ?? null;
  }

  userExists(id: bigint): boolean {
    return this.users.has(id);
  }

  /** The peer an InputPeer names, refused as Telegram refuses a wrong or missing access hash. */
  resolve(viewer: bigint, peer: unknown): ResolvedInput {
    if (peer instanceof Api.InputPeerSelf) return { chatId: `${viewer}`, kind: 'user', id: viewer };
    if (peer instanceof Api.InputPeerUser) {
      const id = num(peer.userId);
      if (!this.users.has(id) || num(peer.accessHash) !== this.accessHash(viewer, `${id}`)) throw new RpcFailure(400, 'PEER_ID_INVALID');
      return { chatId: `${id}`, kind: 'user', id };
    }
    if (peer instanceof Api.InputPeerChannel) {
      const id = num(peer.channelId);
      const chat = this.chats.get(markedId('channel', id));
      if (!chat || num(peer.accessHash) !== this.accessHash(viewer, markedId('channel', id))) throw new RpcFailure(400, 'CHANNEL_INVALID');
      return { chatId: markedId('channel', id), kind: chat.kind, id };
    }
    if (peer instanceof Api.InputPeerChat) {
      const id = num(peer.chatId);
      // a basic group needs no access hash: being in it is what lets the account name it
      if (!this.membership(viewer, markedId('group', id))) throw new RpcFailure(400, 'PEER_ID_INVALID');
      return { chatId: markedId('group', id), kind: 'group', id };
    }
    throw new RpcFailure(400, 'PEER_ID_INVALID');
  }

  /** A user as `viewer` sees it: its access hash for the viewer; the phone for itself and its contacts only. */
  userObject(viewer: bigint, id: bigint): Api.User {
    const u = this.users.get(id)!;
    const self = id === viewer;
    const contact = !self && this.membership(viewer, `${id}`)?.kind === 'user' && (this.membership(viewer, `${id}`) as { contact?: boolean }).contact === true;
    return new Api.User({
      id: big(id),
      self,
      contact,
      bot: u.bot ?? false,
      accessHash: big(this.accessHash(viewer, `${id}`)),
      firstName: u.firstName,
      ...(u.lastName && { lastName: u.lastName }),
      ...(u.username && { username: u.username }),
      ...(u.phone && (self || contact) && { phone: u.phone.replace(/^\+/, '') }),
      status: new Api.UserStatusRecently({}),
    });
  }

  /** A basic group, channel or supergroup as `viewer` sees it: its access hash, its rights there, the members' count. */
  chatObject(viewer: bigint, chatId: string): Api.Chat | Api.Channel {
    const c = this.chats.get(chatId)!;
    const mine = this.membership(viewer, chatId) as typeof c | null;
    const creator = mine?.creator ?? false;
    const adminRights =
      creator || mine?.admin
        ? new Api.ChatAdminRights({
            changeInfo: true,
            postMessages: c.kind === 'channel',
            editMessages: c.kind === 'channel',
            deleteMessages: true,
            banUsers: c.kind !== 'channel',
            inviteUsers: true,
            pinMessages: c.kind !== 'channel',
            manageCall: true,
            addAdmins: creator,
            manageTopics: c.kind === 'supergroup' && c.forum === true,
          })
        : undefined;
    const defaultBannedRights =
      c.kind === 'channel' ? undefined : new Api.ChatBannedRights({ untilDate: 0, sendMessages: c.sendBanned ?? false, sendMedia: c.mediaBanned ?? false });
    const date = Math.floor(this.now() / 1000) - 86_400;
    if (c.kind === 'group') {
      return new Api.Chat({
        id: big(c.id),
        title: c.title,
        photo: new Api.ChatPhotoEmpty(),
        participantsCount: c.members ?? 1,
        date,
        version: 1,
        creator,
        left: mine === null,
        ...(adminRights && { adminRights }),
        ...(defaultBannedRights && { defaultBannedRights }),
      });
    }
    return new Api.Channel({
      id: big(c.id),
      accessHash: big(this.accessHash(viewer, chatId)),
      title: c.title,
      ...(c.username && { username: c.username }),
      photo: new Api.ChatPhotoEmpty(),
      date,
      creator,
      left: mine === null,
      broadcast: c.kind === 'channel',
      megagroup: c.kind === 'supergroup',
      forum: c.kind === 'supergroup' && (c.forum ?? false),
      ...(c.members !== undefined && { participantsCount: c.members }),
      ...(adminRights && { adminRights }),
      ...(defaultBannedRights && { defaultBannedRights }),
    });
  }

  /** users.getUsers, channels.getChannels, contacts.resolveUsername, messages.getDialogs; null for another method. */
  answer(viewer: bigint, request: unknown): { getBytes(): Buffer } | null {
    if (request instanceof Api.users.GetUsers) {
      // a user named with a wrong access hash is left out of the vector (GramJS then cannot find the entity)
      const found = request.id.flatMap((input) => {
        if (input instanceof Api.InputUserSelf) return [this.userObject(viewer, viewer)];
        if (!(input instanceof Api.InputUser)) return [];
        const id = num(input.userId);
        return this.users.has(id) && num(input.accessHash) === this.accessHash(viewer, `${id}`) ? [this.userObject(viewer, id)] : [];
      });
      return vector(found);
    }
    if (request instanceof Api.channels.GetChannels) {
      const chats = request.id.map((input) => {
        if (!(input instanceof Api.InputChannel)) throw new RpcFailure(400, 'CHANNEL_INVALID');
        const chatId = markedId('channel', num(input.channelId));
        if (!this.chats.has(chatId) || num(input.accessHash) !== this.accessHash(viewer, chatId)) throw new RpcFailure(400, 'CHANNEL_INVALID');
        return this.chatObject(viewer, chatId);
      });
      return new Api.messages.Chats({ chats });
    }
    if (request instanceof Api.contacts.ResolveUsername) return this.resolveUsername(viewer, request.username);
    if (request instanceof Api.messages.GetDialogs) return this.getDialogs(viewer, request);
    return null;
  }

  private resolveUsername(viewer: bigint, given: string): Api.contacts.ResolvedPeer {
    const username = given.replace(/^@/, '');
    if (!/^[a-zA-Z][a-zA-Z0-9_]{3,31}$/.test(username)) throw new RpcFailure(400, 'USERNAME_INVALID');
    const same = (u?: string) => u !== undefined && u.toLowerCase() === username.toLowerCase();
    const user = [...this.users.values()].find((u) => same(u.username));
    if (user) return new Api.contacts.ResolvedPeer({ peer: new Api.PeerUser({ userId: big(user.id) }), users: [this.userObject(viewer, user.id)], chats: [] });
    const chat = [...this.chats.values()].find((c) => c.kind !== 'group' && same(c.username));
    if (!chat) throw new RpcFailure(400, 'USERNAME_NOT_OCCUPIED');
    const chatId = markedId(chat.kind, chat.id);
    return new Api.contacts.ResolvedPeer({ peer: new Api.PeerChannel({ channelId: big(chat.id) }), users: [], chats: [this.chatObject(viewer, chatId)] });
  }

  /**
   * messages.getDialogs: newest first, paged by offset_peer (or offset_date) and limit;
   * messages.Dialogs when all fit, else messages.DialogsSlice with the count. Each dialog's
   * top message is a message in it (GramJS's Dialog reads its date).
   */
  private getDialogs(viewer: bigint, request: Api.messages.GetDialogs): Api.messages.Dialogs | Api.messages.DialogsSlice {
    const all = request.folderId === 1 ? [] : (this.dialogs.get(viewer) ?? []);
    const at = Math.floor(this.now() / 1000);
    const dateOf = (i: number) => at - 60 * (i + 1);
    let start = 0;
    if (request.offsetPeer && !(request.offsetPeer instanceof Api.InputPeerEmpty)) {
      const after = this.resolve(viewer, request.offsetPeer).chatId;
      start = all.findIndex((d) => markedId(d.kind, d.id) === after) + 1;
    } else if (request.offsetDate) start = all.findIndex((_, i) => dateOf(i) < request.offsetDate!);
    if (start < 0) start = all.length;
    const limit = request.limit > 0 ? Math.min(request.limit, 100) : 100;
    const page = all.slice(start, start + limit).map((d) => ({ d, i: all.indexOf(d) }));
    const peerOf = (d: DialogSpec) =>
      d.kind === 'user'
        ? new Api.PeerUser({ userId: big(d.id) })
        : d.kind === 'group'
          ? new Api.PeerChat({ chatId: big(d.id) })
          : new Api.PeerChannel({ channelId: big(d.id) });
    const dialogs = page.map(
      ({ d, i }) =>
        new Api.Dialog({
          peer: peerOf(d),
          topMessage: i + 1,
          readInboxMaxId: i + 1,
          readOutboxMaxId: i + 1,
          unreadCount: 0,
          unreadMentionsCount: 0,
          unreadReactionsCount: 0,
          notifySettings: new Api.PeerNotifySettings({}),
          ...(d.kind === 'channel' || d.kind === 'supergroup' ? { pts: 1 } : {}),
        }),
    );
    const messages = page.map(({ d, i }) => new Api.Message({ id: i + 1, peerId: peerOf(d), date: dateOf(i), message: '' }));
    const users = [viewer, ...page.filter(({ d }) => d.kind === 'user').map(({ d }) => BigInt(d.id))]
      .filter((id, k, list) => list.indexOf(id) === k)
      .map((id) => this.userObject(viewer, id));
    const chats = page.filter(({ d }) => d.kind !== 'user').map(({ d }) => this.chatObject(viewer, markedId(d.kind, d.id)));
    if (start === 0 && all.length <= limit) return new Api.messages.Dialogs({ dialogs, messages, chats, users });
    return new Api.messages.DialogsSlice({ count: all.length, dialogs, messages, chats, users });
  }
}
