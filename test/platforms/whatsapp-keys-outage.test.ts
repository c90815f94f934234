import { randomBytes } from 'node:crypto';
import { systemClock } from '@metronome/core';
import { WhatsAppAuthRepository } from '@metronome/db';
import { createRedis } from '@metronome/redis';
import type { TransportAccount } from '@metronome/transports';
import { baileysSocketFactory, readLinkedSession, WhatsAppSocketPool, WhatsAppTransport } from '@metronome/transports/whatsapp';
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import { createTestDatabase, eventually, REDIS_URL, uniquePrefix, type TestDatabase } from '../helpers/test-env.js';
import { linkedSessionBundle, startWireWhatsApp, type WireWhatsApp } from '../helpers/wire-whatsapp.js';
import { insertWhatsAppAccount, quietLogger, socketLeases } from './whatsapp-setup.js';

// Keys never behind the store, with the real Baileys socket on the wire: WhatsApp is
// @openclaw/crabline's WhatsApp Web server (a fake platform nobody here wrote, which decrypts
// what it is sent). PostgreSQL refuses the auth state's writes as when its disk is full
// (SQLSTATE 53100, from a trigger this test adds) while it still answers reads: Baileys reads
// keys before a send and writes them after it. Its relayMessage writes the message inside its
// key transaction and commits the keys after (Socket/messages-send.js, Utils/auth-utils.js).

const KEYS = [randomBytes(32)];
let database: TestDatabase;
let redis: Redis;
let wire: WireWhatsApp;
let pool: WhatsAppSocketPool;
let leases: ReturnType<typeof socketLeases>;
let transport: WhatsAppTransport;

beforeAll(async () => {
  [database, wire] = await Promise.all([createTestDatabase('wa_keys'), startWireWhatsApp()]);
  await sql`create table disk_full (since timestamptz)`.execute(database.db);
  await sql`create function refuse_when_full() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from disk_full) then
        raise exception 'could not extend file: No space left on device' using errcode = 'disk_full';
      end if;
      return coalesce(new, old);
    end $$`.execute(database.db);
  await sql`create trigger refuse_when_full before insert or update or delete on whatsapp_auth for each row execute function refuse_when_full()`.execute(
    database.db,
  );
  redis = createRedis(REDIS_URL, 'test-wa-keys');
  leases = socketLeases(redis, uniquePrefix('wa-keys'));
  pool = new WhatsAppSocketPool({
    holderId: 'keys-outage-test',
    lease: leases,
    auth: new WhatsAppAuthRepository(database.db),
    secretsKeys: KEYS,
    makeSocket: baileysSocketFactory,
    webSocketUrl: wire.url,
    clock: systemClock,
    logger: quietLogger,
    queryTimeoutMs: 10_000,
    // one replica: no holder to wait out before connecting
    freshLeaseWaitMs: 0,
  });
  transport = new WhatsAppTransport({ pool, clock: systemClock, logger: quietLogger, timeoutMs: 5_000 });
}, 120_000);
afterAll(async () => {
  await transport?.close();
  await redis?.quit();
  await database?.drop();
  await wire?.close();
}, 60_000);

let seq = 0;
const send = (account: TransportAccount, chatId: string, text: string) =>
  transport.send(account, { chatId, part: { type: 'text', text }, partIndex: 0, partCount: 1, idempotencyKey: `keys-run:${chatId}:${seq++}` });
const received = (text: string) => wire.accepted.filter((m) => m.text === text).length;

test('a key commit PostgreSQL refuses (disk full) after the write leaves the message sent and closes the socket; later sends wait for the keys, then go on the saved ratchet', async () => {
  const { accountId } = await insertWhatsAppAccount(database.db);
  const session = readLinkedSession(await linkedSessionBundle(wire.url, '601230000'));
  if (!session.ok) throw new Error(session.message);
  expect(await pool.importSession(accountId, session.session)).toBeNull();
  const account: TransportAccount = { id: accountId, externalId: null, credentials: null };
  const chat = '60100000080';

  expect(await send(account, chat, 'first')).toMatchObject({ kind: 'delivered' });
  await eventually('the server to take the first message', async () => received('first') === 1, 10_000, 20);

  await sql`insert into disk_full values (now())`.execute(database.db);
  // The chat's session exists and its devices are known: nothing is stored before the write,
  // the ratchet's next state only at the commit, which PostgreSQL refuses. The message went.
  expect(await send(account, chat, 'second')).toMatchObject({ kind: 'delivered' });
  await eventually('the server to take the second message', async () => received('second') === 1, 10_000, 20);
  // The socket is closed at once: no later message can use keys the store does not have.
  expect(pool.isOpen(accountId)).toBe(false);
  expect(await send(account, chat, 'third')).toEqual({ kind: 'account-wait', code: 'keys_unsaved', retryAfterMs: expect.any(Number) });
  expect(received('third')).toBe(0);
  expect(await leases.peek(accountId, 'another-replica')).toBe('other');

  await sql`delete from disk_full`.execute(database.db);
  // Room again: the kept ratchet is written first, and the same device connects again. The server
  // decrypts the next message, which it could not on a ratchet rolled back to before 'second'.
  let result = await send(account, chat, 'fourth');
  await eventually('a send goes through after the restart', async () => (result = await send(account, chat, 'fourth')).kind === 'delivered', 30_000, 200);
  await eventually('the server to decrypt the fourth message', async () => received('fourth') >= 1, 10_000, 20);
  expect([received('first'), received('second'), received('third')]).toEqual([1, 1, 0]);
}, 120_000);
