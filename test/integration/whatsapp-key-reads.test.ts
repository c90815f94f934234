import { WhatsAppAuthRepository } from '@metronome/db';
import type { WhatsAppAuthStore } from '@metronome/transports/whatsapp';
import { startWireWhatsApp, type WireWhatsApp } from '../helpers/wire-whatsapp.js';
import { wirePoolForFile } from '../platforms/wire-setup.js';

// What a message costs the key store in PostgreSQL once its chat's session exists: the real Baileys
// sends to @openclaw/crabline's WhatsApp Web server (a fake platform nobody here wrote). Baileys asks
// for the chat's `tctoken`, which this server never sets, before every message; its own cache keeps
// only keys that exist, so the auth state remembers the absence (auth-state.ts). Each message then
// writes the two sessions it moved on (the chat's, and the account's own device's) in one statement.

const reads: string[] = [];
const writes: string[][] = [];
let server: WireWhatsApp;
let repository: WhatsAppAuthRepository;
beforeAll(async () => {
  server = await startWireWhatsApp();
});
afterAll(async () => {
  await server?.close();
});

/** The product's repository, its key reads and writes counted (the file's database exists once the pool's beforeAll ran). */
const counted: WhatsAppAuthStore = {
  readCreds: (accountId) => repository.readCreds(accountId),
  readKeys: (accountId, kind, ids) => {
    reads.push(...ids.map((id) => `${kind} ${id}`));
    return repository.readKeys(accountId, kind, ids);
  },
  write: (accountId, rows, now) => {
    writes.push(rows.map((r) => r.kind));
    return repository.write(accountId, rows, now);
  },
  replace: (accountId, rows, now) => repository.replace(accountId, rows, now),
  clear: (accountId) => repository.clear(accountId),
  isTransient: (error) => repository.isTransient(error),
};
const wire = wirePoolForFile('key_reads', () => ({ url: server.url, auth: counted }));

test('messages to a chat already messaged read no keys from PostgreSQL and write once each', async () => {
  repository = new WhatsAppAuthRepository(wire.database.db);
  const account = await wire.account('601260000');
  const chat = '60126000101';
  for (let i = 0; i < 2; i++) expect(await wire.sendText(account, chat, `first ${i}`)).toMatchObject({ kind: 'delivered' });
  // what the first messages read: the chat's token among it, once
  expect(reads.filter((r) => r.startsWith(`tctoken ${chat}`))).toHaveLength(1);
  reads.length = 0;
  writes.length = 0;
  for (let i = 0; i < 5; i++) expect(await wire.sendText(account, chat, `again ${i}`)).toMatchObject({ kind: 'delivered' });
  console.log(`5 more messages to one chat: ${reads.length} key reads, ${writes.length} writes of ${writes.map((w) => w.join('+')).join(', ')}`);
  expect(reads).toEqual([]);
  expect(writes).toEqual(Array.from({ length: 5 }, () => ['session', 'session']));
}, 60_000);
