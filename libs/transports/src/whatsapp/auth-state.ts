import { open, seal, type Clock } from '@metronome/core';
import { registerSecret } from '../secret-scrub.js';
import type { LinkedSession } from './linked-session.js';
import { KeysUnsavedError } from './keys-unsaved-error.js';
import {
  BufferJSON,
  initAuthCreds,
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
  /** On a `lid-mapping` row (phone number → LID): the pair as user JIDs, kept in plain beside it. */
  identity?: { lid: string; pn: string } | undefined;
}

/**
 * Baileys keeps what it learns of a user's two identities as `lid-mapping` keys: the phone
 * number's user part → the LID's user part, and `<lid>_reverse` → the phone number's. The
 * forward entry names the pair; the store copies it in plain so suppressions match both.
 */
function identityOf(kind: string, id: string, value: unknown): AuthRow['identity'] {
  if (kind !== 'lid-mapping' || id.endsWith('_reverse') || typeof value !== 'string' || !value) return undefined;
  return { lid: `${value}@lid`, pn: `${id}@s.whatsapp.net` };
}

/**
 * Where sealed auth state lives (PostgreSQL: `WhatsAppAuthRepository` of @metronome/db, which
 * satisfies this). It stores bytes only: serialising and sealing happen here.
 */
export interface WhatsAppAuthStore {
  readCreds(accountId: string): Promise<Buffer | null>;
  readKeys(accountId: string, kind: string, ids: string[]): Promise<Map<string, Buffer>>;
  /** applies every row in one statement: all or nothing */
  write(accountId: string, rows: AuthRow[], now: Date): Promise<void>;
  clear(accountId: string): Promise<void>;
  /** forgets the account's auth state and writes `rows` in its place, in one transaction */
  replace(accountId: string, rows: AuthRow[], now: Date): Promise<void>;
  /** Whether a failed write may succeed if tried again (the store away), not refused for what it held; absent: always. */
  isTransient?(error: unknown): boolean;
}

const CREDS_KIND = 'creds';

/** An account's live auth state: what a socket is given, and how its changes are saved. */
export interface AuthHandle {
  state: AuthenticationState;
  /** Saves the credentials as they are now (after Baileys applied a `creds.update`). */
  saveCreds(): Promise<void>;
  /** Resolves once every write started so far has ended (written, or kept as unsaved). */
  flush(): Promise<void>;
  /** Rows whose write failed, newest value per key: they are the state's truth until written. */
  unsavedRows(): number;
  /** Writes the unsaved rows again (with nothing new); rejects while the store still refuses. */
  saveUnsaved(): Promise<void>;
}

/** The rows in order, each key once with its last value (one statement may not touch a row twice). */
function latestPerKey(rows: AuthRow[]): AuthRow[] {
  const byKey = new Map<string, AuthRow>();
  for (const r of rows) {
    const key = `${r.kind}\u0000${r.keyId}`;
    byKey.delete(key);
    byKey.set(key, r);
  }
  return [...byKey.values()];
}

/**
 * The device's long-lived secrets become secrets of this process, scrubbed by value from every
 * error it stores, answers or logs (libs/core SecretScrubber): the ADV secret as Baileys keeps
 * it, and each private key in base64 (how BufferJSON writes it) and hex.
 */
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

/**
 * Stores an imported linked device (linked-session.ts) as the account's whole auth state, sealed
 * like Baileys' own writes, in place of what it had: all of it or nothing.
 */
export async function storeLinkedSession(store: WhatsAppAuthStore, accountId: string, session: LinkedSession, secretsKey: Buffer, now: Date): Promise<void> {
  const encode = (value: unknown): Buffer => seal(JSON.stringify(value, BufferJSON.replacer), secretsKey);
  const rows: AuthRow[] = [
    { kind: CREDS_KIND, keyId: '', sealed: encode(session.creds) },
    ...session.keys.map((k) => ({ kind: k.kind, keyId: k.id, sealed: encode(k.value), identity: identityOf(k.kind, k.id, k.value) })),
  ];
  await store.replace(accountId, rows, now);
}

/** Paired: the phone accepted this device (Baileys sets `account` on pair-success). */
export function isPaired(creds: AuthenticationCreds): boolean {
  return Boolean(creds.me?.id && creds.account);
}

/**
 * Loads an account's auth state (or fresh credentials from `initAuthCreds()` when it has none,
 * or when `fresh` is asked: a new pairing then replaces whatever was stored). Values are
 * serialised with Baileys' BufferJSON and sealed with the first of `secretsKeys` (the others
 * only open, for key rotation). Every key update is one write; writes of one account are
 * applied in the order they were made, so an older snapshot never overwrites a newer one.
 * A write that fails because the store is away is kept: its rows go again with the next write
 * (all or nothing), and reads see them, so the state never falls behind what Baileys used. A
 * write refused for what it held is dropped (it would fail forever). Either way `onWriteFailed`
 * tells the caller, who must stop using the keys (socket-pool.ts closes the socket).
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
  const encode = (value: unknown): Buffer => seal(JSON.stringify(value, BufferJSON.replacer), key);
  const decode = <T>(sealed: Buffer): T => JSON.parse(open(sealed, secretsKeys).toString('utf8'), BufferJSON.reviver) as T;

  let creds: AuthenticationCreds;
  if (options.fresh) {
    await store.clear(accountId);
    creds = initAuthCreds();
  } else {
    const stored = await store.readCreds(accountId);
    creds = stored ? decode<AuthenticationCreds>(stored) : initAuthCreds();
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
    // The chain survives a failed write (the caller sees the failure); the next one still runs.
    chain = write.catch(() => undefined);
    return write;
  };
  /** The unsaved value of a key: undefined when none, null when it is a deletion. */
  const unsavedValue = (kind: string, id: string): Buffer | null | undefined => unsaved.find((r) => r.kind === kind && r.keyId === id)?.sealed;

  const keys: SignalKeyStore = {
    get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
      const rows = await store.readKeys(accountId, type, ids);
      for (const id of ids) {
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
      for (const [kind, entries] of Object.entries(data)) {
        for (const [id, value] of Object.entries(entries ?? {}))
          rows.push({ kind, keyId: id, sealed: value ? encode(value) : null, identity: identityOf(kind, id, value) });
      }
      await enqueue(rows);
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
    saveCreds: () => enqueue([{ kind: CREDS_KIND, keyId: '', sealed: encode(state.creds) }]),
    flush: () => chain,
    unsavedRows: () => unsaved.length,
    saveUnsaved: () => enqueue([]),
  };
  // A new account's first credentials are stored at once, so its pairing can resume from them.
  if (options.fresh) await handle.saveCreds();
  return handle;
}
