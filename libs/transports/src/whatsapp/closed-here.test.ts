import { CLOSED_BY_SERVER, Connection, type SocketRefusal } from './connection.js';
import type { WhatsAppSocket } from './socket.js';
import { deferred } from './timers.js';
import { WhatsAppTransport } from './whatsapp-transport.js';
import { WriteMarks } from './write-marks.js';

// A send cut by this replica's own close of the socket (the sender stopping, the pool handing the socket on) before its
// write costs no attempt: it is the hand-over's short wait. WhatsApp closing the socket stays retriable (an attempt).
// The pool here is a stand-in over a real Connection (the real pool runs in test/integration/whatsapp-stop-under-send.test.ts);
// the socket is a stand-in whose send waits, as Baileys' does on its device query, until the test writes or closes it.

const account = { id: 'acc', externalId: null, credentials: null };
const closedError = () => Object.assign(new Error('Connection Closed'), { isBoom: true, output: { statusCode: 428 } });

function standIn(refusal: SocketRefusal | null = null) {
  const writes = new WriteMarks();
  let pending = deferred<unknown>();
  let fail: (error: unknown) => void = () => undefined;
  const sending = deferred<string>();
  const socket = {
    sendMessage: (_jid: string, _content: unknown, options: { messageId: string }) => {
      pending = deferred<unknown>();
      sending.resolve(options.messageId);
      return new Promise((resolve, reject) => {
        fail = reject;
        void pending.promise.then(resolve);
      });
    },
  } as unknown as WhatsAppSocket;
  const conn = new Connection('acc', 'send', socket, {} as never);
  const pool = {
    writes,
    statuses: { track: () => undefined },
    sent: { remember: () => undefined },
    newChats: { hold: async () => null },
    directory: { direct: () => undefined },
    warmChat: async () => undefined,
    use: async <T>(_a: string, work: (s: WhatsAppSocket, w: Connection['whenClosedHere']) => Promise<T>) =>
      refusal ? { ok: false, ...refusal } : { ok: true, value: await work(socket, (l) => conn.whenClosedHere(l)) },
  };
  const transport = new WhatsAppTransport({ pool, clock: { now: () => 0 }, timeoutMs: 1_000 } as never);
  return {
    send: () => transport.send(account, { chatId: '60123000111', part: { type: 'text', text: 'hi' }, partIndex: 0, partCount: 1, idempotencyKey: 'k:0' }),
    /** the send has reached the socket (waiting on its device query, before the write) */
    sending: () => sending.promise,
    /** the pool disposes of the socket: Baileys' send then fails as its next write finds the connection closed */
    close: (why: string) => {
      conn.dispose(why);
      setImmediate(() => fail(closedError()));
    },
    write: (messageId: string) => writes.mark('acc', messageId),
    answer: () => pending.resolve({}),
  };
}

test('the socket closed by this replica before the write (the sender stopping): the hand-over wait, no attempt', async () => {
  const s = standIn();
  const sent = s.send();
  await s.sending();
  s.close('shutdown');
  expect(await sent).toEqual({ kind: 'account-wait', code: 'socket_handover', retryAfterMs: 3_000 });
});

test('the socket handed to another replica under a waiting send: the same hand-over wait', async () => {
  const s = standIn();
  const sent = s.send();
  await s.sending();
  s.close('handed over');
  expect(await sent).toMatchObject({ kind: 'account-wait', code: 'socket_handover' });
});

test('WhatsApp closing the socket before the write stays retriable: an attempt, so a platform that keeps closing ends in failure', async () => {
  const s = standIn();
  const sent = s.send();
  await s.sending();
  s.close(CLOSED_BY_SERVER);
  expect(await sent).toMatchObject({ kind: 'retriable', code: 'connection_closed' });
});

test('closed by this replica after the write: the send keeps its own answer', async () => {
  const s = standIn();
  const sent = s.send();
  s.write(await s.sending());
  s.close('shutdown');
  s.answer();
  expect(await sent).toMatchObject({ kind: 'delivered' });
});

test('a send that finds the pool closed is refused as the hand-over wait', async () => {
  expect(await standIn({ reason: 'closed-here' }).send()).toMatchObject({ kind: 'account-wait', code: 'socket_handover' });
});

test('a connection tells who closed it: this pool (at once to a late listener, never to an unset one) or WhatsApp (no one)', () => {
  const heard: string[] = [];
  const ours = new Connection('a', 'send', {} as WhatsAppSocket, {} as never);
  const unset = ours.whenClosedHere(() => heard.push('unset'));
  unset();
  ours.whenClosedHere(() => heard.push('early'));
  expect(ours.dispose('idle')).toEqual({ reason: 'closed-here' });
  ours.whenClosedHere(() => heard.push('late'));
  const theirs = new Connection('b', 'send', {} as WhatsAppSocket, {} as never);
  theirs.whenClosedHere(() => heard.push('server'));
  expect(theirs.dispose(CLOSED_BY_SERVER)).toMatchObject({ reason: 'connect-failed', failure: { statusCode: 428 } });
  expect(heard).toEqual(['early', 'late']);
});
