import { Api, helpers } from 'telegram';
import type { SocketLease } from '../whatsapp/socket-lease.js';
import { UserClientPool } from './client-pool.js';
import { TelegramUserTransport } from './telegram-user-transport.js';
import type { UserClient } from './user-client.js';

// A send on a connection this replica closed itself (the sender stopping, the holder moving the account, the lease asked
// for) before its request was begun costs no attempt: the hand-over's short wait. The pool is the real one over an
// in-memory lease; the client a stand-in refusing a request once disconnected, as GramJS's invoke does (telegram/client/users.js: `sender.userDisconnected`).

const peer = new Api.InputPeerChannel({ channelId: helpers.returnBigInt(2000), accessHash: helpers.returnBigInt(7) });
const account = { id: 'acc', externalId: '1', credentials: { session: 'session-string' } };
const text = { chatId: '-1002000', part: { type: 'text' as const, text: 'hi' }, partIndex: 0, partCount: 1, idempotencyKey: 'run:-1002000:0' };
const lease: SocketLease = { acquire: async () => 'taken', renew: async () => 'held', release: async () => true, peek: async () => 'mine' };

function setUp() {
  const asked: string[] = [];
  let lookedUp!: () => void;
  let peerKnown = Promise.resolve();
  let disconnected = false;
  const client = {
    connect: async () => undefined,
    alive: () => !disconnected,
    disconnect: async () => void (disconnected = true),
    getInputEntity: async () => (await peerKnown, peer),
    invoke: async (request: Api.AnyRequest) => {
      if (disconnected) throw new Error('Cannot send requests while disconnected. Please reconnect.');
      asked.push(request.className);
      return new Api.Updates({ updates: [new Api.UpdateMessageID({ id: 41, randomId: helpers.returnBigInt(1) })], users: [], chats: [], date: 0, seq: 0 });
    },
  } as unknown as UserClient;
  const pool = new UserClientPool({ apiId: 1, apiHash: 'h', makeClient: () => client, lease, holderId: 'here', renewEveryMs: 60_000 });
  const transport = new TelegramUserTransport({ pool, timeoutMs: 1_000 });
  return {
    pool,
    transport,
    asked,
    /** the next send waits on its peer lookup until `lookedUp()` */
    holdLookup: () => (peerKnown = new Promise<void>((r) => (lookedUp = r))),
    lookedUp: () => lookedUp(),
  };
}

test('a connection this replica let go under a send before its request: the hand-over wait, nothing asked', async () => {
  const s = setUp();
  s.holdLookup();
  const sent = s.transport.send(account, text);
  await new Promise((r) => setImmediate(r));
  await s.pool.drop(account.id);
  s.lookedUp();
  expect(await sent).toEqual({ kind: 'account-wait', code: 'socket_handover', retryAfterMs: 2_000 });
  expect(s.asked).toEqual([]);
});

test('a send after the pool closed (the sender stopping) is the hand-over wait; no connection opens', async () => {
  const s = setUp();
  expect(await s.transport.send(account, text)).toMatchObject({ kind: 'delivered' });
  await s.transport.close();
  expect(await s.transport.send(account, text)).toMatchObject({ kind: 'account-wait', code: 'socket_handover' });
  expect(s.pool.heldAccounts(1_000)).toEqual([]);
});

test('a connection dropped as dead or refused (not this replica’s hand-over) keeps the failure it gives: no hand-over wait', async () => {
  const s = setUp();
  s.holdLookup();
  const sent = s.transport.send(account, text);
  await new Promise((r) => setImmediate(r));
  await s.pool.drop(account.id, false);
  s.lookedUp();
  expect(await sent).toMatchObject({ kind: 'ambiguous', code: 'connection_lost' });
});
