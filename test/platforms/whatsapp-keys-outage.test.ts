import type { TransportAccount } from '@metronome/transports';
import { sql } from 'kysely';
import { eventually } from '../helpers/test-env.js';
import { startWireWhatsApp, type WireWhatsApp } from '../helpers/wire-whatsapp.js';
import { wirePoolForFile } from './wire-setup.js';

// Keys never behind the store, with the real Baileys socket on the wire: WhatsApp is
// @openclaw/crabline's WhatsApp Web server (a fake platform nobody here wrote, which decrypts
// what it is sent). PostgreSQL refuses the auth state's writes as when its disk is full
// (SQLSTATE 53100, from a trigger this test adds) while it still answers reads: Baileys reads
// keys before a send and writes them after it. Its relayMessage writes the message inside its
// key transaction and commits the keys after (Socket/messages-send.js, Utils/auth-utils.js).

let crabline: WireWhatsApp;
beforeAll(async () => {
  crabline = await startWireWhatsApp();
});
afterAll(async () => {
  await crabline?.close();
});
const wire = wirePoolForFile('keys_outage', () => ({ url: crabline.url }));
beforeAll(async () => {
  const db = wire.database.db;
  await sql`create table disk_full (since timestamptz)`.execute(db);
  await sql`create function refuse_when_full() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from disk_full) then
        raise exception 'could not extend file: No space left on device' using errcode = 'disk_full';
      end if;
      return coalesce(new, old);
    end $$`.execute(db);
  await sql`create trigger refuse_when_full before insert or update or delete on whatsapp_auth for each row execute function refuse_when_full()`.execute(db);
});

const send = (account: TransportAccount, chatId: string, text: string) => wire.sendText(account, chatId, text);
const received = (text: string) => crabline.accepted.filter((m) => m.text === text).length;

test('a key commit PostgreSQL refuses (disk full) after the write leaves the message sent and closes the socket; later sends wait for the keys, then go on the saved ratchet', async () => {
  const account = await wire.account('601230000');
  const chat = '60100000080';

  expect(await send(account, chat, 'first')).toMatchObject({ kind: 'delivered' });
  await eventually('the server to take the first message', async () => received('first') === 1, 10_000, 20);

  await sql`insert into disk_full values (now())`.execute(wire.database.db);
  // The chat's session exists and its devices are known: nothing is stored before the write,
  // the ratchet's next state only at the commit, which PostgreSQL refuses. The message went.
  expect(await send(account, chat, 'second')).toMatchObject({ kind: 'delivered' });
  await eventually('the server to take the second message', async () => received('second') === 1, 10_000, 20);
  // The socket is closed at once: no later message can use keys the store does not have.
  expect(wire.pool.isOpen(account.id)).toBe(false);
  expect(await send(account, chat, 'third')).toEqual({ kind: 'account-wait', code: 'keys_unsaved', retryAfterMs: expect.any(Number) });
  expect(received('third')).toBe(0);
  expect(await wire.leases.peek(account.id, 'another-replica')).toBe('other');

  await sql`delete from disk_full`.execute(wire.database.db);
  // Room again: the kept ratchet is written first, and the same device connects again. The server
  // decrypts the next message, which it could not on a ratchet rolled back to before 'second'.
  let result = await send(account, chat, 'fourth');
  await eventually('a send goes through after the restart', async () => (result = await send(account, chat, 'fourth')).kind === 'delivered', 30_000, 200);
  await eventually('the server to decrypt the fourth message', async () => received('fourth') >= 1, 10_000, 20);
  expect([received('first'), received('second'), received('third')]).toEqual([1, 1, 0]);
}, 120_000);
