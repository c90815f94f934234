// A linked device moved in (CONTRACT §3, `POST /v1/accounts/{id}/session`): the files of Baileys' `useMultiFileAuthState`,
// read into credentials and key rows, or refused naming the field, before anything is stored.
import { BufferJSON, initAuthCreds, type AuthenticationCreds, type SignalDataTypeMap } from '@whiskeysockets/baileys';

export interface SessionKey {
  kind: keyof SignalDataTypeMap;
  id: string;
  value: unknown;
}

export interface LinkedSession {
  creds: AuthenticationCreds;
  keys: SessionKey[];
}

export type LinkedSessionResult = { ok: true; session: LinkedSession } | { ok: false; field: string; message: string };

// Longest first: a file `sender-key-memory-…` is of kind `sender-key-memory`, not `sender-key`.
const KINDS = [
  'app-state-sync-version',
  'app-state-sync-key',
  'sender-key-memory',
  'identity-key',
  'lid-mapping',
  'device-list',
  'sender-key',
  'pre-key',
  'session',
  'tctoken',
] as const satisfies readonly (keyof SignalDataTypeMap)[];

export const MAX_SESSION_KEYS = 20_000;

const isBytes = (v: unknown, length?: number): boolean => Buffer.isBuffer(v) && (length === undefined || v.length === length);
const isBase64 = (v: unknown): boolean => typeof v === 'string' && v.length > 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(v);
const isKeyPair = (v: unknown): boolean => {
  const pair = v as { private?: unknown; public?: unknown } | null;
  return typeof pair === 'object' && pair !== null && isBytes(pair.private, 32) && isBytes(pair.public, 32);
};

/** useMultiFileAuthState's fixFileName wrote `/` as `__` and `:` as `-`: undone for sender-key and app-state ids. */
function keyOfFileName(name: string): { kind: keyof SignalDataTypeMap; id: string } | null {
  const base = name.endsWith('.json') ? name.slice(0, -'.json'.length) : name;
  const kind = KINDS.find((k) => base.startsWith(`${k}-`) && base.length > k.length + 1);
  if (!kind) return null;
  let id = base.slice(kind.length + 1);
  if (kind === 'sender-key') id = id.replace(/^(.+@g\.us)--(.+)--(\d+)$/, '$1::$2::$3');
  if (kind === 'app-state-sync-key' || kind === 'app-state-sync-version') id = id.replaceAll('__', '/');
  return { kind, id };
}

function credsProblem(c: Record<string, unknown>): { field: string; message: string } | null {
  const bufferJson = 'expected a key pair of 32-byte Buffers in BufferJSON ({"type":"Buffer","data":"<base64>"})';
  for (const field of ['noiseKey', 'pairingEphemeralKeyPair', 'signedIdentityKey'])
    if (!isKeyPair(c[field])) return { field, message: c[field] === undefined ? 'missing' : bufferJson };
  const spk = c['signedPreKey'] as Record<string, unknown> | undefined;
  if (!spk || !isKeyPair(spk['keyPair'])) return { field: 'signedPreKey.keyPair', message: spk ? bufferJson : 'missing' };
  if (!isBytes(spk['signature'], 64)) return { field: 'signedPreKey.signature', message: 'expected a 64-byte Buffer in BufferJSON' };
  if (!Number.isInteger(spk['keyId'])) return { field: 'signedPreKey.keyId', message: 'expected an integer' };
  if (!Number.isInteger(c['registrationId'])) return { field: 'registrationId', message: 'expected an integer' };
  if (typeof c['advSecretKey'] !== 'string' || Buffer.from(c['advSecretKey'], 'base64').length !== 32)
    return { field: 'advSecretKey', message: 'expected 32 bytes in base64' };
  for (const field of ['nextPreKeyId', 'firstUnuploadedPreKeyId'])
    if (!Number.isInteger(c[field]) || (c[field] as number) < 1) return { field, message: 'expected a positive integer' };
  const me = c['me'] as Record<string, unknown> | undefined;
  if (typeof me?.['id'] !== 'string' || !/^\d{5,20}(:\d{1,3})?@s\.whatsapp\.net$/.test(me['id']))
    return { field: 'me.id', message: "expected the linked device's JID, as 60123456789:12@s.whatsapp.net (a session that was never paired has none)" };
  const account = c['account'] as Record<string, unknown> | undefined;
  if (typeof account !== 'object' || account === null) return { field: 'account', message: 'missing: the device identity the phone signed when it was linked' };
  // protobufjs' toJSON wrote these bytes as base64 strings, which Baileys encodes back as is.
  for (const field of ['details', 'accountSignatureKey', 'accountSignature', 'deviceSignature'])
    if (!isBytes(account[field]) && !isBase64(account[field]))
      return { field: `account.${field}`, message: 'expected bytes: base64, or a Buffer in BufferJSON' };
  return null;
}

/** Fields Baileys fills itself default as in `initAuthCreds()`; every key and identity must be there. */
export function readLinkedSession(body: { creds?: unknown; keys?: unknown }): LinkedSessionResult {
  const revive = (v: unknown): unknown => JSON.parse(JSON.stringify(v), BufferJSON.reviver);
  if (typeof body.creds !== 'object' || body.creds === null || Array.isArray(body.creds))
    return { ok: false, field: 'creds', message: 'expected the object of creds.json' };
  const creds = revive(body.creds) as Record<string, unknown>;
  const problem = credsProblem(creds);
  if (problem) return { ok: false, field: `creds.${problem.field}`, message: problem.message };

  const keys: SessionKey[] = [];
  const files = body.keys ?? {};
  if (typeof files !== 'object' || files === null || Array.isArray(files))
    return { ok: false, field: 'keys', message: "expected an object: each key file's name (without .json) to its JSON" };
  const entries = Object.entries(files);
  if (entries.length > MAX_SESSION_KEYS) return { ok: false, field: 'keys', message: `at most ${MAX_SESSION_KEYS} keys` };
  for (const [name, json] of entries) {
    const key = keyOfFileName(name);
    if (!key)
      return {
        ok: false,
        field: `keys.${name}`,
        message: `not a key file of Baileys' useMultiFileAuthState (its name starts with one of ${KINDS.join(', ')})`,
      };
    if (json === null || json === undefined) return { ok: false, field: `keys.${name}`, message: 'expected the JSON of the key file' };
    const value = revive(json);
    if (key.kind === 'pre-key' && !isKeyPair(value))
      return { ok: false, field: `keys.${name}`, message: 'expected a key pair of 32-byte Buffers in BufferJSON' };
    keys.push({ ...key, value });
  }
  const { me, account, ...rest } = creds;
  return { ok: true, session: { creds: { ...initAuthCreds(), ...rest, me, account, registered: true } as AuthenticationCreds, keys } };
}
