import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BufferJSON, proto, useMultiFileAuthState, type SignalDataSet } from '@whiskeysockets/baileys';
import { readLinkedSession } from './linked-session.js';

/** A folder as Baileys' own useMultiFileAuthState writes it (no network: its key store written directly), read back as the import's bundle. */
async function folderBundle(keys: SignalDataSet): Promise<{ creds: Record<string, unknown>; keys: Record<string, unknown> }> {
  const folder = await mkdtemp(path.join(tmpdir(), 'wa-folder-'));
  try {
    const { state, saveCreds } = await useMultiFileAuthState(folder);
    state.creds.me = { id: '60123456789:12@s.whatsapp.net', name: 'Shop' };
    state.creds.account = proto.ADVSignedDeviceIdentity.fromObject({
      details: Buffer.from('details'),
      accountSignatureKey: Buffer.alloc(32, 1),
      accountSignature: Buffer.alloc(64, 2),
      deviceSignature: Buffer.alloc(64, 3),
    });
    await saveCreds();
    await state.keys.set(keys);
    const out: Record<string, unknown> = {};
    for (const f of await readdir(folder)) if (f !== 'creds.json') out[f.replace(/\.json$/, '')] = JSON.parse(await readFile(path.join(folder, f), 'utf8'));
    return { creds: JSON.parse(await readFile(path.join(folder, 'creds.json'), 'utf8')), keys: out };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

const pair = { private: Buffer.alloc(32, 7), public: Buffer.alloc(32, 8) };

test("a folder Baileys wrote is read whole: every key under the kind and id Baileys' key store asks for", async () => {
  const bundle = await folderBundle({
    'pre-key': { '1': pair, '2': pair },
    session: { '60111222333_1.0': Buffer.from('session') },
    'sender-key': { '120363041234567890@g.us::60111222333::0': Buffer.from('sk') },
    'sender-key-memory': { '120363041234567890@g.us': { '60111222333:0@s.whatsapp.net': true } },
    'app-state-sync-key': { 'AAAAAB/x': proto.Message.AppStateSyncKeyData.fromObject({ keyData: Buffer.from('k') }) },
    'lid-mapping': { '60111222333': '99887766554433' },
  });
  const read = readLinkedSession(bundle);
  if (!read.ok) throw new Error(`${read.field}: ${read.message}`);
  expect(read.session.creds.me?.id).toBe('60123456789:12@s.whatsapp.net');
  expect(Buffer.isBuffer(read.session.creds.noiseKey.private)).toBe(true);
  expect(read.session.keys.map((k) => `${k.kind} ${k.id}`).sort()).toEqual(
    [
      'app-state-sync-key AAAAAB/x',
      'lid-mapping 60111222333',
      'pre-key 1',
      'pre-key 2',
      'sender-key 120363041234567890@g.us::60111222333::0',
      'sender-key-memory 120363041234567890@g.us',
      'session 60111222333_1.0',
    ].sort(),
  );
  const preKey = read.session.keys.find((k) => k.kind === 'pre-key')!.value as typeof pair;
  expect(preKey.private.equals(pair.private)).toBe(true);
});

test('a malformed session is refused naming its field', async () => {
  const { creds, keys } = await folderBundle({ 'pre-key': { '1': pair } });
  const field = (body: { creds?: unknown; keys?: unknown }) => {
    const r = readLinkedSession(body);
    return r.ok ? 'ok' : r.field;
  };
  expect(field({ creds, keys })).toBe('ok');
  expect(field({ keys })).toBe('creds');
  expect(field({ creds: { ...creds, noiseKey: undefined } })).toBe('creds.noiseKey');
  // a Buffer as plain base64 (not BufferJSON)
  const noise = JSON.parse(JSON.stringify(creds['noiseKey']), BufferJSON.reviver) as typeof pair;
  expect(field({ creds: { ...creds, noiseKey: { private: noise.private.toString('base64'), public: noise.public.toString('base64') } } })).toBe(
    'creds.noiseKey',
  );
  expect(field({ creds: { ...creds, signedPreKey: { ...(creds['signedPreKey'] as object), signature: 'abc' } } })).toBe('creds.signedPreKey.signature');
  expect(field({ creds: { ...creds, registrationId: 'x' } })).toBe('creds.registrationId');
  expect(field({ creds: { ...creds, me: undefined } })).toBe('creds.me.id');
  expect(field({ creds: { ...creds, me: { id: 'someone@g.us' } } })).toBe('creds.me.id');
  expect(field({ creds: { ...creds, account: undefined } })).toBe('creds.account');
  expect(field({ creds, keys: [] })).toBe('keys');
  expect(field({ creds, keys: { ...keys, 'contacts-1': {} } })).toBe('keys.contacts-1');
  expect(field({ creds, keys: { ...keys, 'pre-key-9': { private: 'x' } } })).toBe('keys.pre-key-9');
});
