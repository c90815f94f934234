import { telegramAddressOf, telegramChatIdOf, type TelegramPeer, type TelegramPeerStore } from '@metronome/core';
import { Api, helpers } from 'telegram';
import { idOfPeer, inputPeerOf, kindOfPeer, peersOf } from './peer-entities.js';
import type { UserClient } from './user-client.js';

/** No access hash is known for the chat, and Telegram told none: the account cannot address it. */
export class PeerUnknown extends Error {}

/**
 * The InputPeer a target names (docs/platforms.md, "Peers"): a kept peer, a basic group by id, a username resolved once and kept,
 * else what this connection's GramJS learnt. PeerUnknown when none knows it.
 */
export async function resolvePeer(client: UserClient, store: TelegramPeerStore, accountId: string, chatId: string, at: Date): Promise<Api.TypeInputPeer> {
  const address = telegramAddressOf(chatId);
  if (!address) throw new PeerUnknown(`${JSON.stringify(chatId)} is neither a Telegram chat id nor a username`);
  const kept = await store.find(accountId, chatId);
  if (kept) return inputPeerOf(kept);
  if (address.kind === 'chat') return new Api.InputPeerChat({ chatId: helpers.returnBigInt(address.id) });
  if (address.kind === 'username') {
    const answer = await client.invoke(new Api.contacts.ResolveUsername({ username: address.username }));
    const learnt = peersOf(answer);
    await store.save(accountId, learnt, at);
    const peer = (answer as Api.contacts.ResolvedPeer).peer;
    const found = learnt.find((p) => p.chatId === telegramChatIdOf(kindOfPeer(peer), idOfPeer(peer)));
    if (!found) throw new PeerUnknown(`Telegram resolved @${address.username} to no user or chat`);
    return inputPeerOf(found);
  }
  try {
    return await client.getInputEntity(chatId);
  } catch (error) {
    // GramJS throws a plain Error when it holds no access hash (client/users.js); a refusal is Telegram's
    if ((error as { errorMessage?: unknown }).errorMessage !== undefined) throw error;
    throw new PeerUnknown(`this account knows no access hash for ${chatId}: sync its chat directory (or name the chat by its @username) so Telegram tells it`);
  }
}

/** Keeps what clients learn, writing only what this process has not kept already; best effort, retried at the next learning. */
export function keepLearntPeers(store: TelegramPeerStore, now: () => Date = () => new Date()): (accountId: string, peers: TelegramPeer[]) => void {
  const kept = new Map<string, string>();
  return (accountId, peers) => {
    const fresh = peers.filter((p) => kept.get(`${accountId}|${p.chatId}`) !== `${p.accessHash}|${p.username}`);
    if (fresh.length === 0) return;
    for (const p of fresh) kept.set(`${accountId}|${p.chatId}`, `${p.accessHash}|${p.username}`);
    store.save(accountId, fresh, now()).catch(() => {
      for (const p of fresh) kept.delete(`${accountId}|${p.chatId}`);
    });
  };
}

/** A username may move to another chat, so a peer read from the store is read again after this. */
const PEER_CACHE_MS = 10 * 60_000;

/** `store` with its answers kept in process for PEER_CACHE_MS; a save drops what it changes. */
export function cachedPeers(store: TelegramPeerStore, now: () => number = Date.now): TelegramPeerStore {
  const known = new Map<string, { peer: TelegramPeer; until: number }>();
  const keyOf = (accountId: string, chatIdOrUsername: string) => `${accountId}|${chatIdOrUsername.replace(/^@/, '').toLowerCase()}`;
  return {
    async find(accountId, chatIdOrUsername) {
      const key = keyOf(accountId, chatIdOrUsername);
      const hit = known.get(key);
      if (hit && hit.until > now()) return hit.peer;
      const peer = await store.find(accountId, chatIdOrUsername);
      if (peer) known.set(key, { peer, until: now() + PEER_CACHE_MS });
      else known.delete(key);
      return peer;
    },
    async save(accountId, peers, at) {
      const chats = new Set(peers.map((p) => p.chatId));
      const names = new Set(peers.flatMap((p) => (p.username ? [p.username] : [])));
      for (const [key, { peer }] of known)
        if (key.startsWith(`${accountId}|`) && (chats.has(peer.chatId) || (peer.username !== null && names.has(peer.username)))) known.delete(key);
      await store.save(accountId, peers, at);
    },
  };
}

export class MemoryPeerStore implements TelegramPeerStore {
  private readonly peers = new Map<string, TelegramPeer>();

  async find(accountId: string, chatIdOrUsername: string): Promise<TelegramPeer | null> {
    const name = chatIdOrUsername.replace(/^@/, '').toLowerCase();
    const direct = this.peers.get(`${accountId}|${chatIdOrUsername}`);
    if (direct) return direct;
    for (const [key, p] of this.peers) if (key.startsWith(`${accountId}|`) && p.username === name) return p;
    return null;
  }

  async save(accountId: string, peers: readonly TelegramPeer[], _at?: Date): Promise<void> {
    // as PostgreSQL keeps them: a username now held by another chat leaves the one that had it
    const names = new Set(peers.flatMap((p) => (p.username ? [p.username] : [])));
    for (const [key, p] of this.peers)
      if (key.startsWith(`${accountId}|`) && p.username !== null && names.has(p.username)) this.peers.set(key, { ...p, username: null });
    for (const p of peers)
      this.peers.set(`${accountId}|${p.chatId}`, { ...p, accessHash: p.accessHash ?? this.peers.get(`${accountId}|${p.chatId}`)?.accessHash ?? null });
  }
}
