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
  /** applies every row in one statement: all or nothing */
  write(accountId: string, rows: AuthRow[], now: Date): Promise<void>;
  clear(accountId: string): Promise<void>;
  replace(accountId: string, rows: AuthRow[], now: Date): Promise<void>;
  /** Whether a failed write may succeed if tried again (the store away), not refused for what it held; absent: always. */
  isTransient?(error: unknown): boolean;
}

const CREDS_KIND = 'creds';

export interface AuthHandle {
  state: AuthenticationState;
  saveCreds(): Promise<void>;
  flush(): Promise<void>;
  /** Rows whose write failed, newest value per key: they are the state's truth until written. */
  unsavedRows(): number;
  saveUnsaved(): Promise<void>;
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

const MAX_ABSENT = 10_000;

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
    chain = write.catch(() => undefined);
    return write;
  };
  const unsavedValue = (kind: string, id: string): Buffer | null | undefined => unsaved.find((r) => r.kind === kind && r.keyId === id)?.sealed;
  // Keys known to have no row (Baileys' cache keeps only what exists, and asks for a chat's absent `tctoken` each message):
  // this handle is the account's one writer while it holds the lease, so an absence holds until a set (one during the read too).
  const absent = new Set<string>();
  let sets = 0;

  const keys: SignalKeyStore = {
    get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
      const setsBefore = sets;
      const asked = ids.filter((id) => !absent.has(`${type}\n${id}`));
      const rows = asked.length > 0 ? await store.readKeys(accountId, type, asked) : new Map<string, Buffer>();
      if (sets === setsBefore && absent.size < MAX_ABSENT)
        for (const id of asked) if (!rows.has(id) && unsavedValue(type, id) === undefined) absent.add(`${type}\n${id}`);
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
      sets++;
      for (const [kind, entries] of Object.entries(data)) {
        for (const [id, value] of Object.entries(entries ?? {})) {
          absent.delete(`${kind}\n${id}`);
          rows.push({ kind, keyId: id, sealed: value ? encode(value) : null, identity: identityOf(kind, id, value) });
        }
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
