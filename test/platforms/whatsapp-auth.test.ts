import { randomBytes } from 'node:crypto';
import { keyId, ManualClock, open } from '@metronome/core';
import { WhatsAppAuthRepository } from '@metronome/db';
import { loadAuthState, type AuthRow, type WhatsAppAuthStore } from '@metronome/transports/whatsapp';
import { addTransactionCapability, BufferJSON, initAuthCreds, proto } from '@whiskeysockets/baileys';
import { createLogger } from '@metronome/observability';
import { seedAccount, seedTenant } from '../helpers/seed.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-env.js';

// A WhatsApp account's auth state (Baileys' creds and Signal keys) through PostgreSQL:
// serialised with Baileys' BufferJSON, sealed with SECRETS_KEY, each key update one statement.

let tdb: TestDatabase;
let repo: WhatsAppAuthRepository;
const clock = new ManualClock(Date.parse('2026-06-01T09:00:00Z'));
const KEY = randomBytes(32);
const OTHER_KEY = randomBytes(32);
const logger = createLogger('whatsapp-auth-test', 'silent');

beforeAll(async () => {
  tdb = await createTestDatabase('wa_auth');
  repo = new WhatsAppAuthRepository(tdb.db);
});
afterAll(async () => {
  await tdb.drop();
});

async function newAccount(): Promise<string> {
  return seedAccount(tdb.db, await seedTenant(tdb.db), { platform: 'whatsapp', name: 'wa', external_id: null, status: 'disconnected' });
}

/** The repository, counting the write statements it is asked for. */
function counting(store: WhatsAppAuthStore): WhatsAppAuthStore & { writes: AuthRow[][] } {
  const writes: AuthRow[][] = [];
  return {
    writes,
    readCreds: (a) => store.readCreds(a),
    readKeys: (a, k, ids) => store.readKeys(a, k, ids),
    write: (a, rows, now) => {
      writes.push(rows);
      return store.write(a, rows, now);
    },
    clear: (a) => store.clear(a),
    replace: (a, rows, now) => store.replace(a, rows, now),
  };
}

const keyPair = () => ({ public: randomBytes(32), private: randomBytes(32) });

test('fresh credentials from initAuthCreds round-trip through PostgreSQL, Buffers and all', async () => {
  const accountId = await newAccount();
  const first = await loadAuthState(repo, accountId, [KEY], clock, { fresh: true });
  const creds = first.state.creds;
  expect(creds.registered).toBe(false);
  // What pairing adds: the device's identity, with binary fields nested in objects.
  Object.assign(creds, {
    me: { id: '60123456789:7@s.whatsapp.net', name: 'Operator' },
    account: { details: randomBytes(40), accountSignatureKey: randomBytes(32), accountSignature: randomBytes(64), deviceSignature: randomBytes(64) },
  });
  await first.saveCreds();

  const again = await loadAuthState(repo, accountId, [KEY], clock);
  expect(JSON.stringify(again.state.creds, BufferJSON.replacer)).toBe(JSON.stringify(creds, BufferJSON.replacer));
  expect(Buffer.isBuffer(again.state.creds.noiseKey.private)).toBe(true);
  expect(Buffer.from(again.state.creds.noiseKey.private).equals(Buffer.from(creds.noiseKey.private))).toBe(true);
  expect(Buffer.from(again.state.creds.account!.details!).equals(Buffer.from(creds.account!.details!))).toBe(true);
});

test('keys: set many in one statement, get a batch, delete with null', async () => {
  const accountId = await newAccount();
  const store = counting(repo);
  const { state } = await loadAuthState(store, accountId, [KEY], clock, { fresh: true });
  store.writes.length = 0;
  const preKeys = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [String(i + 1), keyPair()]));
  const session = new Uint8Array(randomBytes(120));
  const appStateKey = proto.Message.AppStateSyncKeyData.fromObject({ keyData: randomBytes(32), timestamp: 1_700_000_000 });
  await state.keys.set({ 'pre-key': preKeys, session: { '60123456789.0': session }, 'app-state-sync-key': { AAAAAB: appStateKey } });
  expect(store.writes).toHaveLength(1);
  expect(store.writes[0]).toHaveLength(52);

  const got = await state.keys.get('pre-key', ['1', '7', '50', '51']);
  expect(Object.keys(got).sort()).toEqual(['1', '50', '7']);
  expect(Buffer.from(got['7']!.private).equals(preKeys['7']!.private)).toBe(true);
  const sessions = await state.keys.get('session', ['60123456789.0']);
  expect(Buffer.from(sessions['60123456789.0']!).equals(Buffer.from(session))).toBe(true);
  const appKeys = await state.keys.get('app-state-sync-key', ['AAAAAB']);
  // rebuilt as the protobuf class Baileys expects, not a plain object
  expect(appKeys['AAAAAB']).toBeInstanceOf(proto.Message.AppStateSyncKeyData);
  expect(Buffer.from(appKeys['AAAAAB']!.keyData!).equals(Buffer.from(appStateKey.keyData!))).toBe(true);

  await state.keys.set({ 'pre-key': { '1': null, '2': null }, session: { '60123456789.0': null } });
  expect(Object.keys(await state.keys.get('pre-key', ['1', '2', '3']))).toEqual(['3']);
  expect(await state.keys.get('session', ['60123456789.0'])).toEqual({});
  const rows = await tdb.db
    .selectFrom('whatsapp_auth')
    .select(({ fn }) => fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  expect(Number(rows.n)).toBe(1 + 48 + 1); // creds, pre-keys 3–50, the app-state key
});

test('a key update is applied whole or not at all', async () => {
  const accountId = await newAccount();
  const { state } = await loadAuthState(repo, accountId, [KEY], clock, { fresh: true });
  await state.keys.set({ 'pre-key': { '1': keyPair() } });
  // PostgreSQL refuses the NUL in the last key id: the whole statement fails, deletion included.
  await expect(state.keys.set({ 'pre-key': { '1': null, '2': keyPair(), 'bad\u0000id': keyPair() } })).rejects.toThrow();
  expect(Object.keys(await state.keys.get('pre-key', ['1', '2']))).toEqual(['1']);
});

test("Baileys' own transactions over the store commit as one write", async () => {
  const accountId = await newAccount();
  const store = counting(repo);
  const { state } = await loadAuthState(store, accountId, [KEY], clock, { fresh: true });
  store.writes.length = 0;
  const keys = addTransactionCapability(state.keys, logger, { maxCommitRetries: 1, delayBetweenTriesMs: 1 });
  await keys.transaction(async () => {
    await keys.set({ 'pre-key': { '10': keyPair() } });
    await keys.set({ 'sender-key': { 'group@g.us::60123456789::0': new Uint8Array(randomBytes(40)) } });
    // read-your-writes inside the transaction, before anything reached PostgreSQL
    expect(Object.keys(await keys.get('pre-key', ['10']))).toEqual(['10']);
    expect(store.writes).toHaveLength(0);
  }, 'test');
  expect(store.writes).toHaveLength(1);
  expect(Object.keys(await state.keys.get('pre-key', ['10']))).toEqual(['10']);
});

test('encrypted at rest: no plaintext in PostgreSQL, unreadable with another key, readable after rotation', async () => {
  const accountId = await newAccount();
  const { state, saveCreds } = await loadAuthState(repo, accountId, [KEY], clock, { fresh: true });
  const session = randomBytes(64);
  await state.keys.set({ session: { '60199999999.0': new Uint8Array(session) } });
  await saveCreds();
  const rows = await tdb.db.selectFrom('whatsapp_auth').select(['kind', 'key_id', 'sealed']).where('account_id', '=', accountId).execute();
  expect(rows.map((r) => r.kind).sort()).toEqual(['creds', 'session']);
  const secrets = [
    Buffer.from(state.creds.noiseKey.private).toString('base64'),
    Buffer.from(state.creds.signedIdentityKey.private).toString('base64'),
    state.creds.advSecretKey,
    session.toString('base64'),
  ];
  for (const row of rows) {
    const raw = row.sealed.toString('latin1');
    for (const s of [...secrets, 'noiseKey', 'Buffer', 'private']) expect(raw).not.toContain(s);
    expect(() => open(row.sealed, [OTHER_KEY])).toThrow();
    expect(row.sealed.subarray(1, 5).equals(keyId(KEY))).toBe(true);
  }
  await expect(loadAuthState(repo, accountId, [OTHER_KEY], clock)).rejects.toThrow();

  // Rotation: the new key seals from now on, the old one still opens what it sealed.
  const rotated = await loadAuthState(repo, accountId, [OTHER_KEY, KEY], clock);
  expect(rotated.state.creds.advSecretKey).toBe(state.creds.advSecretKey);
  await rotated.saveCreds();
  const creds = await tdb.db
    .selectFrom('whatsapp_auth')
    .select('sealed')
    .where('account_id', '=', accountId)
    .where('kind', '=', 'creds')
    .executeTakeFirstOrThrow();
  expect(creds.sealed.subarray(1, 5).equals(keyId(OTHER_KEY))).toBe(true);
  const stillOld = await rotated.state.keys.get('session', ['60199999999.0']);
  expect(Buffer.from(stillOld['60199999999.0']!).equals(session)).toBe(true);
});

test('a new pairing starts from fresh credentials and forgets every old key', async () => {
  const accountId = await newAccount();
  const old = await loadAuthState(repo, accountId, [KEY], clock, { fresh: true });
  await old.state.keys.set({ 'pre-key': { '1': keyPair() } });
  const fresh = await loadAuthState(repo, accountId, [KEY], clock, { fresh: true });
  expect(fresh.state.creds.advSecretKey).not.toBe(old.state.creds.advSecretKey);
  expect(await fresh.state.keys.get('pre-key', ['1'])).toEqual({});
  const fromDb = await loadAuthState(repo, accountId, [KEY], clock);
  expect(fromDb.state.creds.advSecretKey).toBe(fresh.state.creds.advSecretKey);
  expect(initAuthCreds().advSecretKey).not.toBe(fresh.state.creds.advSecretKey);
});
