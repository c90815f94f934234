import type { TelegramPeer, TelegramPeerStore } from '@metronome/core';
import { cachedPeers, MemoryPeerStore } from './peers.js';

// A send reads an account's peer from the store once, then from the process for a while; a save
// of a chat (or of a username that moved) drops what was kept for it.

const ann: TelegramPeer = { chatId: '100', kind: 'user', accessHash: '7', username: 'ann' };

function counting(): { store: TelegramPeerStore; reads: () => number } {
  const inner = new MemoryPeerStore();
  let reads = 0;
  return {
    store: { find: (a, c) => (reads++, inner.find(a, c)), save: (a, p, at) => inner.save(a, p, at) },
    reads: () => reads,
  };
}

test('a peer found is read once, by any spelling of its username; a miss is read again', async () => {
  const { store, reads } = counting();
  await store.save('acc', [ann], new Date());
  const cached = cachedPeers(store, () => 0);
  expect(await cached.find('acc', '100')).toEqual(ann);
  expect(await cached.find('acc', '100')).toEqual(ann);
  expect(await cached.find('acc', '@Ann')).toEqual(ann);
  expect(await cached.find('acc', 'ann')).toEqual(ann);
  expect(reads()).toBe(2);
  expect(await cached.find('acc', '200')).toBeNull();
  expect(await cached.find('acc', '200')).toBeNull();
  expect(reads()).toBe(4);
});

test('a save drops what it changes (a new hash; a username now another chat’s), and the cache ages out', async () => {
  const { store, reads } = counting();
  let now = 0;
  const cached = cachedPeers(store, () => now);
  await cached.save('acc', [ann], new Date());
  expect(await cached.find('acc', '@ann')).toEqual(ann);
  const moved: TelegramPeer = { chatId: '300', kind: 'user', accessHash: '9', username: 'ann' };
  await cached.save('acc', [moved], new Date());
  expect(await cached.find('acc', '@ann')).toEqual(moved);
  expect(await cached.find('acc', '@ann')).toEqual(moved);
  const before = reads();
  now += 11 * 60_000;
  await cached.find('acc', '@ann');
  expect(reads()).toBe(before + 1);
});
