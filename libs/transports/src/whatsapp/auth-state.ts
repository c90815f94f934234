import { isSealedWith, open, seal, type Clock } from '@metronome/core';
import { registerSecret } from '../secret-scrub.js';
import type { LinkedSession } from './linked-session.js';
import { KeysUnsavedError } from './keys-unsaved-error.js';
import {
  BufferJSON,
  initAuthCreds,
  jidDecode,
  proto,
  type AuthenticationCreds,
  type AuthenticationState,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from '@whiskeysockets/baileys';

/** One row of an account's auth state: sealed bytes, or null to delete it. */
export interface AuthRow {
  kind: string;
  keyId: string;
  sealed: Buffer | null;
  /** On a `lid-mapping` row: the phone number / LID pair, kept in plain so suppressions match both. */
  identity?: { lid: string; pn: string } | undefined;
}

function identityOf(kind: string, id: string, value: unknown): AuthRow['identity'] {
  if (kind !== 'lid-mapping' || id.endsWith('_reverse') || typeof value !== 'string' || !value) return undefined;
  return { lid: `${value}@lid`, pn: `${id}@s.whatsapp.net` };
}

/** Where sealed auth state lives (libs/db `WhatsAppAuthRepository`); bytes only, sealed here. */
export interface WhatsAppAuthStore {
  readCreds(accountId: string): Promise<Buffer | null>;
  readKeys(accountId: string, kind: string, ids: string[]): Promise<Map<string, Buffer>>;
  /** the rows among `keys` (of any kinds) in one statement; absent: readCreds and readKeys */
  readMany?(accountId: string, keys: KeyRef[]): Promise<(KeyRef & { sealed: Buffer })[]>;
  /** a chat's keys a first message to it reads (its LID mapping, device 0's sessions, the privacy token), in one statement */
  readChat?(accountId: string, pnUser: string): Promise<(KeyRef & { sealed: Buffer })[]>;
  /** applies every row in one statement: all or nothing */
  write(accountId: string, rows: AuthRow[], now: Date): Promise<void>;
  clear(accountId: string): Promise<void>;
  replace(accountId: string, rows: AuthRow[], now: Date): Promise<void>;
  /** Whether a failed write may succeed if tried again (the store away), not refused for what it held; absent: always. */
  isTransient?(error: unknown): boolean;
}

const CREDS_KIND = 'creds';

export interface KeyRef {
  kind: string;
  keyId: string;
}

const WITH_CREDS: KeyRef[] = [{ kind: 'tctoken', keyId: '__index' }];

/** Baileys reads the tctoken index as a socket is made (WITH_CREDS), then its own keys as it opens (socket.js 'CB:success'). */
function ownKeys(creds: AuthenticationCreds): KeyRef[] {
  const me = creds.me?.id ? jidDecode(creds.me.id) : undefined;
  if (!me?.user) return [];
  const device = me.device?.toString() || '0';
  return [
    { kind: 'lid-mapping', keyId: me.user },
    { kind: 'device-list', keyId: me.user },
    { kind: 'session', keyId: `${me.user}.${device}` },
  ];
}

export interface AuthHandle {
  state: AuthenticationState;
  saveCreds(): Promise<void>;
  flush(): Promise<void>;
  /** Rows whose write failed, newest value per key: they are the state's truth until written. */
  unsavedRows(): number;
  saveUnsaved(): Promise<void>;
  /** Reads a one-to-one chat's keys in one statement before a send, where Baileys would read them one at a time. */
  warmChat(jid: string): Promise<void>;
}

/** Each key once with its last value: one statement may not touch a row twice. */
function latestPerKey(rows: AuthRow[]): AuthRow[] {
  const byKey = new Map<string, AuthRow>();
  for (const r of rows) {
    const key = `${r.kind}\u0000${r.keyId}`;
    byKey.delete(key);
    byKey.set(key, r);
  }
  return [...byKey.values()];
}

/** The device's long-lived secrets are scrubbed by value from every error and log line (base64 as BufferJSON writes, and hex). */
function registerAuthSecrets(creds: AuthenticationCreds): void {
  registerSecret(creds.advSecretKey);
  for (const pair of [creds.noiseKey, creds.signedIdentityKey, creds.signedPreKey?.keyPair, creds.pairingEphemeralKeyPair]) {
    const key = pair?.private;
    if (!key) continue;
    const bytes = Buffer.from(key);
    registerSecret(bytes.toString('base64'));
    registerSecret(bytes.toString('hex'));
  }
}

/** An imported linked device (linked-session.ts) replaces the account's auth state, all or nothing. */
export async function storeLinkedSession(store: WhatsAppAuthStore, accountId: string, session: LinkedSession, secretsKey: Buffer, now: Date): Promise<void> {
  const encode = (value: unknown): Buffer => seal(JSON.stringify(value, BufferJSON.replacer), secretsKey);
  const rows: AuthRow[] = [
    { kind: CREDS_KIND, keyId: '', sealed: encode(session.creds) },
    ...session.keys.map((k) => ({ kind: k.kind, keyId: k.id, sealed: encode(k.value), identity: identityOf(k.kind, k.id, k.value) })),
  ];
  await store.replace(accountId, rows, now);
}

const MAX_KNOWN = 10_000;
// found rows kept for the sends under way (a session is read twice a message): few and brief, as they can be large
const MAX_WARM = 32;
const WARM_MS = 60_000;
// chats warmed once a connection (Baileys keeps what it read): past this many, forgotten and warmed again
const MAX_WARMED_CHATS = 2_000;
const keyOf = (kind: string, id: string) => `${kind}\n${id}`;

/** Paired: the phone accepted this device (Baileys sets `account` on pair-success). */
export function isPaired(creds: AuthenticationCreds): boolean {
  return Boolean(creds.me?.id && creds.account);
}

/**
 * Loads an account's auth state (fresh credentials when it has none, or when `fresh`). Writes are applied in order, so an older
 * snapshot never overwrites a newer one; a write failing while the store is away is kept and sent again with the next one, and
 * refused rows are dropped. Either way `onWriteFailed` tells the caller, who must stop using the keys.
 */
export async function loadAuthState(
  store: WhatsAppAuthStore,
  accountId: string,
  secretsKeys: Buffer[],
  clock: Clock,
  options: { fresh?: boolean; onWriteFailed?: (error: unknown, kept: boolean) => void } = {},
): Promise<AuthHandle> {
  const key = secretsKeys[0];
  if (!key) throw new Error('no secrets key configured');
  const decode = <T>(sealed: Buffer): T => JSON.parse(open(sealed, secretsKeys).toString('utf8'), BufferJSON.reviver) as T;
  // Rows this handle knows (null: none; Baileys' cache keeps only keys that exist): as the lease makes it the account's one
  // writer, they hold until its own set (one during a read too), and a set of the same value, or of the same creds, writes nothing.
  const known = new Map<string, { sealed: Buffer; json: string } | null>();
  const learn = (kind: string, id: string, sealed: Buffer | undefined) =>
    known.set(keyOf(kind, id), sealed ? { sealed, json: open(sealed, secretsKeys).toString('utf8') } : null);

  const warm = new Map<string, { sealed: Buffer; at: number }>();
  const warmed = (kind: string, id: string) => {
    const w = warm.get(keyOf(kind, id));
    return w && clock.now() - w.at < WARM_MS ? w.sealed : undefined;
  };
  const keep = (kind: string, id: string, sealed: Buffer) => {
    if (warm.size >= MAX_WARM) warm.delete(warm.keys().next().value!);
    warm.set(keyOf(kind, id), { sealed, at: clock.now() });
  };

  // the keys set while a chat's keys are read: those the read may not keep
  const warming = new Set<Set<string>>();
  const warmedChats = new Set<string>();

  let sets = 0;
  let creds: AuthenticationCreds;
  let storedCreds: string | null = null;
  let prefetched: Promise<void> = Promise.resolve();
  if (options.fresh) {
    await store.clear(accountId);
    creds = initAuthCreds();
  } else {
    const read = store.readMany;
    const rows = read ? await read.call(store, accountId, [{ kind: CREDS_KIND, keyId: '' }, ...WITH_CREDS]) : [];
    const stored = read ? rows.find((r) => r.kind === CREDS_KIND)?.sealed : await store.readCreds(accountId);
    creds = stored ? decode<AuthenticationCreds>(stored) : initAuthCreds();
    // sealed under a retired key: the next save seals them again under the current one
    storedCreds = stored && isSealedWith(stored, key) ? JSON.stringify(creds, BufferJSON.replacer) : null;
    if (read) {
      for (const k of WITH_CREDS) learn(k.kind, k.keyId, rows.find((r) => r.kind === k.kind && r.keyId === k.keyId)?.sealed);
      const own = ownKeys(creds);
      const before = sets;
      if (own.length > 0)
        prefetched = read
          .call(store, accountId, own)
          .then((found) => {
            if (sets === before) for (const k of own) learn(k.kind, k.keyId, found.find((r) => r.kind === k.kind && r.keyId === k.keyId)?.sealed);
          })
          .catch(() => undefined);
    }
  }

  let chain: Promise<void> = Promise.resolve();
  let unsaved: AuthRow[] = [];
  const enqueue = (rows: AuthRow[]): Promise<void> => {
    const write = chain.then(async () => {
      const batch = latestPerKey([...unsaved, ...rows]);
      try {
        await store.write(accountId, batch, new Date(clock.now()));
        unsaved = [];
      } catch (error) {
        const kept = store.isTransient?.(error) ?? true;
        unsaved = kept ? batch : [];
        options.onWriteFailed?.(error, kept);
        throw new KeysUnsavedError(error);
      }
    });
    chain = write.catch(() => undefined);
    return write;
  };
  const unsavedValue = (kind: string, id: string): Buffer | null | undefined => unsaved.find((r) => r.kind === kind && r.keyId === id)?.sealed;

  const keys: SignalKeyStore = {
    get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
      await prefetched;
      const setsBefore = sets;
      const asked = ids.filter((id) => !known.has(keyOf(type, id)) && !warmed(type, id));
      const rows = asked.length > 0 ? await store.readKeys(accountId, type, asked) : new Map<string, Buffer>();
      if (sets === setsBefore)
        for (const id of asked) {
          const found = rows.get(id);
          if (found) keep(type, id, found);
          else if (known.size < MAX_KNOWN && unsavedValue(type, id) === undefined) known.set(keyOf(type, id), null);
        }
      for (const id of ids) {
        const value = known.get(keyOf(type, id))?.sealed ?? warmed(type, id);
        if (value) rows.set(id, value);
        const pending = unsavedValue(type, id);
        if (pending === null) rows.delete(id);
        else if (pending) rows.set(id, pending);
      }
      const out: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const [id, sealed] of rows) {
        let value = decode<unknown>(sealed);
        // Baileys keeps app-state keys as protobuf objects, which JSON does not rebuild.
        if (type === 'app-state-sync-key' && value) value = proto.Message.AppStateSyncKeyData.fromObject(value as object);
        out[id] = value as SignalDataTypeMap[T];
      }
      return out;
    },
    set: async (data: SignalDataSet) => {
      const rows: AuthRow[] = [];
      sets++;
      for (const [kind, entries] of Object.entries(data)) {
        for (const [id, value] of Object.entries(entries ?? {})) {
          const k = keyOf(kind, id);
          warm.delete(k);
          for (const touched of warming) touched.add(k);
          const was = known.get(k);
          const json = value ? JSON.stringify(value, BufferJSON.replacer) : null;
          if (was !== undefined && (was?.json ?? null) === json) continue;
          const sealed = json === null ? null : seal(json, key);
          if (was) known.set(k, sealed && json ? { sealed, json } : null);
          else known.delete(k);
          rows.push({ kind, keyId: id, sealed, identity: identityOf(kind, id, value) });
        }
      }
      if (rows.length > 0) await enqueue(rows);
    },
    clear: async () => {
      await chain;
      await store.clear(accountId);
    },
  };

  registerAuthSecrets(creds);
  const state: AuthenticationState = { creds, keys };
  const handle: AuthHandle = {
    state,
    saveCreds: () => {
      const json = JSON.stringify(state.creds, BufferJSON.replacer);
      if (json === storedCreds) return chain;
      storedCreds = json;
      return enqueue([{ kind: CREDS_KIND, keyId: '', sealed: seal(json, key) }]);
    },
    flush: () => chain,
    unsavedRows: () => unsaved.length,
    saveUnsaved: () => enqueue([]),
    warmChat: async (jid) => {
      const chat = jidDecode(jid);
      if (!store.readChat || chat?.server !== 's.whatsapp.net' || !chat.user) return;
      if (warmedChats.has(chat.user)) return;
      if (warmedChats.size >= MAX_WARMED_CHATS) warmedChats.clear();
      warmedChats.add(chat.user);
      const touched = new Set<string>();
      warming.add(touched);
      const rows = await store.readChat(accountId, chat.user).catch(() => []);
      warming.delete(touched);
      for (const r of rows) if (!touched.has(keyOf(r.kind, r.keyId))) keep(r.kind, r.keyId, r.sealed);
      // absent: no mapping, or (the chat's LID known) no privacy token; Baileys would ask again for each
      const found = rows.find((r) => r.kind === 'lid-mapping');
      const lid = found && decode<unknown>(found.sealed);
      const absent = found
        ? typeof lid === 'string' && !rows.some((r) => r.kind === 'tctoken')
          ? [keyOf('tctoken', `${lid}@lid`)]
          : []
        : [keyOf('lid-mapping', chat.user)];
      for (const k of absent) if (!touched.has(k) && known.size < MAX_KNOWN) known.set(k, null);
    },
  };
  // A new account's first credentials are stored at once, so its pairing can resume from them.
  if (options.fresh) await handle.saveCreds();
  return handle;
}
