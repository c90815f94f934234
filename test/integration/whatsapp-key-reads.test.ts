import { WhatsAppAuthRepository } from '@metronome/db';
import type { WhatsAppAuthStore } from '@metronome/transports/whatsapp';
import { pino } from 'pino';
import { eventually } from '../helpers/test-env.js';
import { startWireWhatsApp, type WireWhatsApp } from '../helpers/wire-whatsapp.js';
import { wirePoolForFile } from '../platforms/wire-setup.js';

// What a message costs the key store in PostgreSQL once its chat's session exists: the real Baileys
// sends to @openclaw/crabline's WhatsApp Web server (a fake platform nobody here wrote). Baileys asks
// for the chat's `tctoken`, which this server never sets, before every message; its own cache keeps
// only keys that exist, so the auth state remembers the absence (auth-state.ts). Each message then
// writes the two sessions it moved on (the chat's, and the account's own device's) in one statement.
// A connect reads the creds and what Baileys asks for as the socket opens in two statements, and
// writes back nothing Baileys tells it that is unchanged (its LID, its device list).

const reads: string[] = [];
/** what each connect read at once (the creds with the tctoken index, then the device's own keys) */
const readsMany: string[] = [];
/** Baileys' own log: it says when the work it does as a socket opens is done */
const logged: string[] = [];
const writes: string[][] = [];
/** the chats whose keys a send read at once (auth-state.ts warmChat) */
const readsChat: string[] = [];
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
  readMany: (accountId, keys) => {
    readsMany.push(keys.map((k) => k.kind).join('+'));
    return repository.readMany(accountId, keys);
  },
  readChat: (accountId, pnUser) => {
    readsChat.push(pnUser);
    return repository.readChat(accountId, pnUser);
  },
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
const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(line) });
const wire = wirePoolForFile('key_reads', () => ({ url: server.url, auth: counted, logger }));

test('messages to a chat already messaged read no keys from PostgreSQL and write once each', async () => {
  repository = new WhatsAppAuthRepository(wire.database.db);
  const account = await wire.account('601260000');
  const chat = '60126000101';
  for (let i = 0; i < 2; i++) expect(await wire.sendText(account, chat, `first ${i}`)).toMatchObject({ kind: 'delivered' });
  // what the first messages read: the chat's token among it, once
  expect(reads.filter((r) => r.startsWith(`tctoken ${chat}`))).toHaveLength(1);
  reads.length = 0;
  readsChat.length = 0;
  writes.length = 0;
  for (let i = 0; i < 5; i++) expect(await wire.sendText(account, chat, `again ${i}`)).toMatchObject({ kind: 'delivered' });
  // a chat's keys are read at once only before its first message on a connection
  expect(readsChat).toEqual([]);
  console.log(`5 more messages to one chat: ${reads.length} key reads, ${writes.length} writes of ${writes.map((w) => w.join('+')).join(', ')}`);
  expect(reads).toEqual([]);
  expect(writes).toEqual(Array.from({ length: 5 }, () => ['session', 'session']));
}, 60_000);

test('a connect of a device connected before reads its auth state in two statements and writes none', async () => {
  repository = new WhatsAppAuthRepository(wire.database.db);
  const account = await wire.account('601260002');
  const { pool } = await wire.replica();
  for (const list of [reads, readsMany, writes, logged]) list.length = 0;
  expect((await pool.use(account.id, async () => undefined)).ok).toBe(true);
  // after 'open', Baileys stores its LID mapping, sets its own device list and moves its own session
  await eventually('the own LID session', async () => logged.some((l) => l.includes('Own LID session created')), 10_000, 20);
  console.log(`a connect: ${readsMany.join(', ')} read at once, ${reads.length} key reads, ${writes.length} writes`);
  expect(readsMany).toEqual(['creds+tctoken', 'lid-mapping+device-list+session']);
  expect(reads).toEqual([]);
  expect(writes).toEqual([]);
  // Baileys' warning at each new socket that history sync is off (on purpose): not a line per connect
  expect(logged.filter((l) => (JSON.parse(l) as { level: number }).level >= 40)).toEqual([]);
}, 60_000);

test("a chat's first message after its account moved to another replica reads the chat's keys in one statement", async () => {
  repository = new WhatsAppAuthRepository(wire.database.db);
  const account = await wire.account('601260004');
  const chat = '60126000401';
  expect(await wire.sendText(account, chat, 'before the move')).toMatchObject({ kind: 'delivered' });
  // the socket moves as a hand-over moves it: closed here, opened on the other replica by its send
  expect(await wire.pool.letGo(account.id, false)).toBe(true);
  const other = await wire.replica();
  for (const list of [reads, readsChat, writes]) list.length = 0;
  expect(await other.sendText(account, chat, 'after the move')).toMatchObject({ kind: 'delivered' });
  console.log(`a first message after a move: the chat's keys in ${readsChat.length} statement, then ${reads.length} key reads (${reads.join(', ')})`);
  // one by one, Baileys read the LID mapping, the chat's session twice and the token: 4 statements a chat; what is left is
  // the account's own device's session under its LID, once a connection
  expect(readsChat).toEqual([chat]);
  expect(reads).toEqual(['session 601260004_1.0']);
}, 60_000);
