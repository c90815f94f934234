import { telegramAddressOf, type TelegramPeer } from '@metronome/core';
import { Api, helpers } from 'telegram';

// Telegram's entities (users, basic groups, channels) as the peers an account keeps, and back.

export function inputPeerOf(p: TelegramPeer): Api.TypeInputPeer {
  const address = telegramAddressOf(p.chatId);
  const id = helpers.returnBigInt(address && address.kind !== 'username' ? address.id : '0');
  const accessHash = helpers.returnBigInt(p.accessHash ?? '0');
  if (p.kind === 'channel') return new Api.InputPeerChannel({ channelId: id, accessHash });
  if (p.kind === 'chat') return new Api.InputPeerChat({ chatId: id });
  return new Api.InputPeerUser({ userId: id, accessHash });
}

/** Every user and chat an answer of Telegram's carries (Updates, ResolvedPeer, Dialogs…), as peers to keep. */
export function peersOf(answer: unknown): TelegramPeer[] {
  const a = answer as { users?: unknown[]; chats?: unknown[] } | null;
  return [...(a?.users ?? []), ...(a?.chats ?? [])].flatMap((e) => {
    const p = peerOfEntity(e);
    return p ? [p] : [];
  });
}

/** What GramJS adds to its entity cache, as peers. */
export function learntPeers(entities: unknown): TelegramPeer[] {
  if (Array.isArray(entities)) return entities.flatMap((e) => peerOfEntity(e) ?? []);
  const one = peerOfEntity((entities as { user?: unknown } | null)?.user);
  return [...peersOf(entities), ...(one ? [one] : [])];
}

/** A user, basic group or channel entity as a peer; null for anything else (an empty or min entity without its hash). */
export function peerOfEntity(e: unknown): TelegramPeer | null {
  if (e instanceof Api.User && !e.min && e.accessHash !== undefined)
    return { chatId: e.id.toString(), kind: 'user', accessHash: e.accessHash.toString(), username: e.username?.toLowerCase() ?? null };
  if (e instanceof Api.Chat || e instanceof Api.ChatForbidden) return { chatId: `-${e.id.toString()}`, kind: 'chat', accessHash: null, username: null };
  if ((e instanceof Api.Channel && !e.min && e.accessHash !== undefined) || e instanceof Api.ChannelForbidden)
    return {
      chatId: `-100${e.id.toString()}`,
      kind: 'channel',
      accessHash: e.accessHash!.toString(),
      username: e instanceof Api.Channel ? (e.username?.toLowerCase() ?? null) : null,
    };
  return null;
}

export function kindOfPeer(peer: Api.TypePeer): TelegramPeer['kind'] {
  return peer instanceof Api.PeerChannel ? 'channel' : peer instanceof Api.PeerChat ? 'chat' : 'user';
}

export function idOfPeer(peer: Api.TypePeer): string {
  return (peer instanceof Api.PeerChannel ? peer.channelId : peer instanceof Api.PeerChat ? peer.chatId : (peer as Api.PeerUser).userId).toString();
}
