import { ManualClock } from '@metronome/core';
import { AccountCoolingRepository, NewChatLimitRepository } from '@metronome/db';
import type { SendResult } from '@metronome/core';
import { eventually } from '../helpers/test-env.js';
import { mexNotification, privacyTokenNotification, startWireServer, type WireServer } from '../helpers/wire-whatsapp-server.js';
import { wirePoolForFile, type WirePool } from './wire-setup.js';

// What WhatsApp lets an account do with NEW chats (libs/core new-chat-limits.ts), through the real
// Baileys socket on the wire against a FAKE WhatsApp Web server of this project's own
// (test/helpers/wire-whatsapp-server.ts): a 463, the reach-out time lock and the new-chat cap,
// each recorded in PostgreSQL by the replica that holds the socket and honoured by another one.

let server: WireServer;
beforeAll(async () => {
  server = await startWireServer();
});
afterAll(async () => {
  await server?.close();
});
const wire = wirePoolForFile('new_chats_wire', () => ({ url: server.url }));
const limits = () => new NewChatLimitRepository(wire.database.db);
/** Messages the server took for `chat`, by phone number or LID (Baileys may address either), any device. */
const received = (chat: string) => server.messages.filter((m) => m.to.replace(/(:\d+)?@.*$/, '') === chat.replace(/@.*$/, '')).length;
/**
 * What the server took for each chat, once it took the last written one: a send resolves when
 * Baileys wrote the frame, and the server (in this process) reads it a moment later.
 */
async function receivedOnce(chats: string[], last: string): Promise<number[]> {
  await eventually(`the server to take the message to ${last}`, async () => received(last) > 0, 10_000, 10);
  return chats.map(received);
}

/** Sends from `replica`, waiting while the account's socket is handed over from the other one. */
async function sendFrom(replica: Pick<WirePool, 'sendText'>, account: Awaited<ReturnType<WirePool['account']>>, chat: string): Promise<SendResult> {
  return eventually(
    `a send to ${chat} past the hand-over`,
    async () => {
      const r = await replica.sendText(account, chat);
      return r.kind === 'account-wait' && r.code === 'socket_handover' ? null : r;
    },
    20_000,
    100,
  );
}

test('a 463 holds the new chats of the account on every replica; a chat whose person gave a privacy token and a group keep going; a lift ends it', async () => {
  const account = await wire.account('601890000');
  expect(await wire.sendText(account, '60189000100')).toMatchObject({ kind: 'delivered' });
  // the person at …101 wrote to the account: WhatsApp pushes their privacy token, Baileys stores it (PostgreSQL)
  await server.push(privacyTokenNotification('60189000101@s.whatsapp.net', '60189000101@lid'));
  await eventually(
    'the token stored',
    async () =>
      (await wire.database.db.selectFrom('whatsapp_auth').select('key_id').where('account_id', '=', account.id).where('kind', '=', 'tctoken').execute()).some(
        (k) => k.key_id === '60189000101@lid',
      ),
    5_000,
    20,
  );
  server.groups.set('120363000000000001@g.us', ['60189000300@s.whatsapp.net', '60189000301@s.whatsapp.net']);

  server.ack = ({ to }) => (to.startsWith('60189000463') ? { error: '463' } : null);
  expect(await wire.sendText(account, '60189000463')).toMatchObject({ kind: 'delivered' });
  await eventually('the hold recorded', async () => (await limits().read(account.id))?.refusedAt != null, 5_000, 20);
  expect(await wire.sendText(account, '60189000200')).toMatchObject({ kind: 'chat-wait', code: 'new_chats_refused' });

  // another replica takes the account over: it holds the same new chats, from PostgreSQL
  const other = await wire.replica();
  expect(await sendFrom(other, account, '60189000201')).toMatchObject({ kind: 'chat-wait', code: 'new_chats_refused' });
  expect(await other.sendText(account, '60189000101')).toMatchObject({ kind: 'delivered' });
  expect(await other.sendText(account, '120363000000000001@g.us')).toMatchObject({ kind: 'delivered' });
  expect(await receivedOnce(['60189000200', '60189000201', '60189000101', '120363000000000001@g.us'], '120363000000000001@g.us')).toEqual([0, 0, 1, 1]);

  expect(await new AccountCoolingRepository(wire.database.db).lift(account.id, null, new Date())).toBe(true);
  expect(await other.sendText(account, '60189000201')).toMatchObject({ kind: 'delivered' });
  expect(await receivedOnce(['60189000201'], '60189000201')).toEqual([1]);
}, 90_000);

test('the reach-out time lock: fetched when the socket opens, honoured by another replica until its end, lifted by a notification', async () => {
  server.ack = () => null;
  const endsAt = new Date(Math.ceil((Date.now() + 3_600_000) / 1000) * 1000);
  server.reachoutLock = { endsAt, type: 'BIZ_QUALITY' };
  const account = await wire.account('601890010');
  // the first send after the socket opened already waits: the lock was asked for on opening
  expect(await wire.sendText(account, '60189001100')).toMatchObject({ kind: 'chat-wait', code: 'reachout_time_lock' });
  expect(await limits().read(account.id)).toMatchObject({ reachoutLock: { until: endsAt, type: 'BIZ_QUALITY' } });

  const clock = new ManualClock(Date.now());
  const other = await wire.replica(clock);
  server.reachoutLock = { endsAt, type: 'BIZ_QUALITY' };
  const held = await sendFrom(other, account, '60189001101');
  expect(held).toMatchObject({ kind: 'chat-wait', code: 'reachout_time_lock' });
  expect((held as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(3_500_000);
  // past its end: the new chat goes, though nothing told the lift (WhatsApp's lock ends by itself)
  clock.set(endsAt.getTime() + 1);
  expect(await other.sendText(account, '60189001101')).toMatchObject({ kind: 'delivered' });

  // a new lock pushed, then its lift pushed: the store follows both (the server answers a fetch the same way)
  clock.set(Date.now());
  server.reachoutLock = { endsAt, type: 'DEFAULT' };
  await server.push(
    mexNotification('NotificationUserReachoutTimelockUpdate', {
      xwa2_notify_account_reachout_timelock: {
        is_active: true,
        time_enforcement_ends: String(Math.floor(endsAt.getTime() / 1000)),
        enforcement_type: 'DEFAULT',
      },
    }),
  );
  await eventually('the pushed lock recorded', async () => (await limits().read(account.id))?.reachoutLock?.type === 'DEFAULT', 5_000, 20);
  expect(await other.sendText(account, '60189001102')).toMatchObject({ kind: 'chat-wait', code: 'reachout_time_lock' });
  server.reachoutLock = null;
  await server.push(mexNotification('NotificationUserReachoutTimelockUpdate', { xwa2_notify_account_reachout_timelock: { is_active: false } }));
  await eventually('the lift recorded', async () => (await limits().read(account.id))?.reachoutLock === null, 5_000, 20);
  expect(await other.sendText(account, '60189001102')).toMatchObject({ kind: 'delivered' });
  expect(await receivedOnce(['60189001100', '60189001101', '60189001102'], '60189001102')).toEqual([0, 1, 1]);
  server.reachoutLock = null;
}, 90_000);

test('the new-chat cap: CAPPED when the socket opens holds new chats until the cycle ends; a pushed update under quota lets them go', async () => {
  const cycleEnd = Math.floor(Date.now() / 1000) + 86_400;
  server.cap = { capping_status: 'CAPPED', total_quota: 20, used_quota: 20, cycle_end_timestamp: String(cycleEnd) };
  const account = await wire.account('601890020');
  const held = await wire.sendText(account, '60189002100');
  expect(held).toMatchObject({ kind: 'chat-wait', code: 'new_chat_cap' });
  expect((held as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(86_000_000);
  expect(await limits().read(account.id)).toMatchObject({ cap: { status: 'CAPPED', total: 20, used: 20, cycleEndsAt: new Date(cycleEnd * 1000) } });

  await server.push(
    mexNotification('MessageCappingInfoNotification', {
      xwa2_notify_new_chat_messages_capping_info_update: {
        capping_status: 'SECOND_WARNING',
        total_quota: 40,
        used_quota: 21,
        cycle_end_timestamp: String(cycleEnd),
      },
    }),
  );
  await eventually('the update recorded', async () => (await limits().read(account.id))?.cap?.status === 'SECOND_WARNING', 5_000, 20);
  expect(await wire.sendText(account, '60189002100')).toMatchObject({ kind: 'delivered' });
  expect(await receivedOnce(['60189002100'], '60189002100')).toEqual([1]);
  server.cap = { capping_status: 'NONE' };
}, 90_000);

test('a 463 another replica recorded while it held the socket holds the new chats here once the socket is back, though this replica read them free a moment before', async () => {
  server.ack = () => null;
  const account = await wire.account('601890004');
  // this replica reads the account's limits (nothing holds) and keeps them for minutes
  expect(await wire.sendText(account, '60189000400')).toMatchObject({ kind: 'delivered' });
  const other = await wire.replica();
  server.ack = ({ to }) => (to.startsWith('60189000463') ? { error: '463' } : null);
  expect(await sendFrom(other, account, '60189000463')).toMatchObject({ kind: 'delivered' });
  await eventually('the hold recorded', async () => (await limits().read(account.id))?.refusedAt != null, 5_000, 20);
  // back here, with the lock and cap not fetched at the open (nothing written then): the socket new on this replica reads the limits afresh
  server.mexFails = true;
  try {
    expect(await sendFrom(wire, account, '60189000401')).toMatchObject({ kind: 'chat-wait', code: 'new_chats_refused' });
  } finally {
    server.mexFails = false;
  }
  expect(received('60189000401')).toBe(0);
}, 90_000);
