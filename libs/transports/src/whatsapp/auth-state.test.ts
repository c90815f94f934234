import { randomBytes } from 'node:crypto';
import { ManualClock } from '@metronome/core';
import { loadAuthState, type AuthRow, type WhatsAppAuthStore } from './auth-state.js';
import { KeysUnsavedError } from './keys-unsaved-error.js';

// The auth state's writes when the store fails: kept while it is away, dropped when it refuses
// what they hold. The store is in memory here; test/platforms/whatsapp-keys-outage.test.ts runs
// the same against a PostgreSQL that stops and starts.

const KEY = randomBytes(32);
const clock = new ManualClock(0);
class Refused extends Error {}

function memoryStore() {
  const rows = new Map<string, Buffer>();
  const writes: AuthRow[][] = [];
  let failWith: Error | null = null;
  const store: WhatsAppAuthStore = {
    readCreds: async () => null,
    readKeys: async (_a, kind, ids) => new Map(ids.flatMap((id) => (rows.has(`${kind}/${id}`) ? [[id, rows.get(`${kind}/${id}`)!] as const] : []))),
    write: async (_a, batch) => {
      if (failWith) throw failWith;
      writes.push(batch);
      for (const r of batch) r.sealed ? rows.set(`${r.kind}/${r.keyId}`, r.sealed) : rows.delete(`${r.kind}/${r.keyId}`);
    },
    clear: async () => rows.clear(),
    replace: async () => {
      throw new Error('not used here');
    },
    isTransient: (error) => !(error instanceof Refused),
  };
  return { store, writes, fail: (e: Error | null) => (failWith = e) };
}

const session = (n: number) => new Uint8Array([n]);

test('a write that fails while the store is away is kept: reads see it, and it goes again whole', async () => {
  const { store, writes, fail } = memoryStore();
  const failures: boolean[] = [];
  const auth = await loadAuthState(store, 'a', [KEY], clock, { onWriteFailed: (_e, kept) => failures.push(kept) });
  fail(new Error('connect ECONNREFUSED'));
  // thrown as its own class (Baileys rethrows it from the commit after a send's write), the store's error its cause
  const refused = await Promise.resolve(auth.state.keys.set({ session: { s1: session(1), s2: session(2) } })).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(KeysUnsavedError);
  expect(((refused as Error).cause as Error).message).toBe('connect ECONNREFUSED');
  await expect(auth.state.keys.set({ session: { s1: session(3) } })).rejects.toThrow();
  expect(failures).toEqual([true, true]);
  expect(auth.unsavedRows()).toBe(2);
  fail(null);
  // what Baileys used is what it reads back, before the store has it
  expect(Object.keys(await auth.state.keys.get('session', ['s1', 's2']))).toEqual(['s1', 's2']);
  await auth.saveUnsaved();
  expect(auth.unsavedRows()).toBe(0);
  // one statement, each key once with its newest value
  expect(writes.at(-1)!.map((r) => r.keyId)).toEqual(['s2', 's1']);
  expect([...(await auth.state.keys.get('session', ['s1'])).s1!]).toEqual([3]);
});

test('a write the store refuses for what it held is dropped, not retried forever', async () => {
  const { store, writes, fail } = memoryStore();
  const failures: boolean[] = [];
  const auth = await loadAuthState(store, 'a', [KEY], clock, { onWriteFailed: (_e, kept) => failures.push(kept) });
  fail(new Refused('invalid byte sequence'));
  await expect(auth.state.keys.set({ session: { bad: session(1) } })).rejects.toThrow();
  expect(failures).toEqual([false]);
  expect(auth.unsavedRows()).toBe(0);
  fail(null);
  await auth.state.keys.set({ session: { good: session(2) } });
  expect(writes.at(-1)!.map((r) => r.keyId)).toEqual(['good']);
});

test('a key found absent is not read again until it is set; one set while the read was out is not taken for absent', async () => {
  const { store } = memoryStore();
  const reads: string[] = [];
  const readKeys = store.readKeys;
  store.readKeys = async (a, kind, ids) => {
    reads.push(`${kind}:${ids.join(',')}`);
    return readKeys(a, kind, ids);
  };
  const auth = await loadAuthState(store, 'a', [KEY], clock);
  const keys = auth.state.keys;
  expect(await keys.get('tctoken', ['chat'])).toEqual({});
  expect(await keys.get('tctoken', ['chat'])).toEqual({});
  expect(reads).toEqual(['tctoken:chat']);
  // set, then read again from the store
  await keys.set({ tctoken: { chat: { token: Buffer.from('t'), timestamp: '1' } } });
  expect(Object.keys(await keys.get('tctoken', ['chat']))).toEqual(['chat']);
  expect(reads).toEqual(['tctoken:chat', 'tctoken:chat']);

  // a read that misses while a set of the same key is written: the next read asks the store again
  let release = () => {};
  store.readKeys = async (a, kind, ids) => {
    reads.push(`${kind}:${ids.join(',')}`);
    const before = await readKeys(a, kind, ids);
    await new Promise<void>((r) => (release = r));
    return before;
  };
  const missed = keys.get('tctoken', ['other']);
  await new Promise((r) => setImmediate(r));
  await keys.set({ tctoken: { other: { token: Buffer.from('o'), timestamp: '2' } } });
  release();
  expect(await missed).toEqual({});
  store.readKeys = readKeys;
  expect(Object.keys(await keys.get('tctoken', ['other']))).toEqual(['other']);
});

test('a reconnect reads the creds with the tctoken index, then the own keys in one read, and writes what is unchanged not again', async () => {
  const { store, writes } = memoryStore();
  const seed = await loadAuthState(store, 'a', [KEY], clock);
  Object.assign(seed.state.creds, { me: { id: '60123:7@s.whatsapp.net', lid: '999:7@lid' } });
  await seed.saveCreds();
  await seed.state.keys.set({ 'device-list': { '60123': ['7'] }, 'lid-mapping': { '60123': '999' } });
  const rows = new Map(writes.flat().map((r) => [`${r.kind}/${r.keyId}`, r.sealed!]));
  store.readCreds = async () => rows.get('creds/')!;
  const reads: string[] = [];
  const readKeys = store.readKeys;
  store.readKeys = async (a, kind, ids) => {
    reads.push(`${kind}:${ids.join(',')}`);
    return readKeys(a, kind, ids);
  };
  store.readMany = async (_a, keys) => {
    reads.push(keys.map((k) => `${k.kind}:${k.keyId}`).join(' '));
    return keys.flatMap((k) => (rows.has(`${k.kind}/${k.keyId}`) ? [{ ...k, sealed: rows.get(`${k.kind}/${k.keyId}`)! }] : []));
  };
  writes.length = 0;

  const auth = await loadAuthState(store, 'a', [KEY], clock);
  const keys = auth.state.keys;
  // what Baileys does as the socket opens: its LID again, its own mapping, device list and session
  Object.assign(auth.state.creds, { me: { ...auth.state.creds.me } });
  await auth.saveCreds();
  expect(await keys.get('tctoken', ['__index'])).toEqual({});
  expect(await keys.get('lid-mapping', ['60123'])).toEqual({ '60123': '999' });
  await keys.set({ 'device-list': { '60123': ['7'] } });
  expect(await keys.get('session', ['60123.7'])).toEqual({});
  expect(reads).toEqual(['creds: tctoken:__index', 'lid-mapping:60123 device-list:60123 session:60123.7']);
  expect(writes).toEqual([]);

  // a change is written, and read back from what was set
  await keys.set({ 'device-list': { '60123': ['7', '8'] } });
  Object.assign(auth.state.creds, { me: { ...auth.state.creds.me, name: 'renamed' } });
  await auth.saveCreds();
  expect(writes.map((w) => w.map((r) => r.kind))).toEqual([['device-list'], ['creds']]);
  expect(await keys.get('device-list', ['60123'])).toEqual({ '60123': ['7', '8'] });
  expect(reads).toHaveLength(2);
});
