import { DEVELOPMENT_SECRETS_KEY } from '@metronome/core';
import { WhatsAppSentMessageRepository, type MessagePart } from '@metronome/db';
import type { SentMessageStore, WhatsAppSocketPool } from '@metronome/transports/whatsapp';
import { cleanupSentMessages } from '../../services/sender/src/resend-cleanup.js';
import { driveRun } from '../helpers/sender-harness.js';
import { eventually } from '../helpers/test-env.js';
import { makePool, quietLogger, startWhatsAppHarness, type WhatsAppHarness } from './whatsapp-setup.js';

// Durable re-sends: a recipient's device that could not decrypt a message asks for it again,
// maybe hours later, and maybe of another replica by then. Two socket pools on one PostgreSQL
// and one Redis stand for two sender replicas, over a FAKE WhatsApp network; the clock is a
// manual one (no real wait).

const DAY = 86_400_000;
const text = (t: string): MessagePart => ({ type: 'text', text: t });
const jid = (phone: string) => `${phone}@s.whatsapp.net`;

let w: WhatsAppHarness;
let repo: WhatsAppSentMessageRepository;
let b: WhatsAppSocketPool;
// the harness builds its database while building the transports: the store reaches it once it exists
const store: SentMessageStore = { remember: (...a) => repo.remember(...a), find: (...a) => repo.find(...a) };

beforeAll(async () => {
  w = await startWhatsAppHarness({}, {}, { sentMessages: store, resendKeepMs: 7 * DAY });
  repo = new WhatsAppSentMessageRepository(w.h.tdb.db);
  b = makePool(w.network, w.leases, w.auth, [DEVELOPMENT_SECRETS_KEY], w.h.clock, { sentMessages: store, resendKeepMs: 7 * DAY });
});
afterAll(async () => {
  await b.close();
  await w.close();
});

test('a re-send request for a message sent 6 hours earlier, made to another replica, is answered; past WHATSAPP_RESEND_DAYS it is not', async () => {
  const { tenantId, accountId } = await w.seedPairedAccount();
  w.network.lids.assign('60100000071', '987650000071');
  await driveRun(w.h, await w.h.seedRun({ tenantId, accountId, targets: ['60100000071'], parts: [text('hello, six hours ago')] }));
  const [sent] = w.network.messagesTo(jid('60100000071'));
  await w.pool.sent.flush();

  w.h.clock.advance(6 * 3_600_000);
  // The other replica takes the account's socket (the first hands it over).
  await eventually('the second replica holds the socket', async () => (await b.use(accountId, async () => true)).ok, 10_000, 20);
  expect(w.pool.isOpen(accountId)).toBe(false);
  const socket = w.network.openSocket(accountId)!;
  expect(w.network.sockets.indexOf(socket)).toBeGreaterThan(0);

  expect(await socket.retryReceipt(jid('60100000071'), sent!.messageId)).toBe(true);
  // WhatsApp may name the chat by the person's LID: the message id alone finds it
  expect(await socket.retryReceipt('987650000071@lid', sent!.messageId)).toBe(true);
  expect(w.network.retries.slice(-2).map((r) => r.resent)).toEqual([
    expect.objectContaining({ conversation: 'hello, six hours ago' }),
    expect.objectContaining({ conversation: 'hello, six hours ago' }),
  ]);

  // Past the setting: the cleanup deletes it, and the request is not answered.
  w.h.clock.advance(7 * DAY);
  await repo.remember(accountId, '3EB0RECENT', Buffer.from([]), new Date(w.h.clock.now() - DAY));
  expect(await cleanupSentMessages({ repo, clock: w.h.clock, logger: quietLogger as never, keepMs: 7 * DAY, batch: 1 })).toBe(1);
  expect(await w.h.tdb.db.selectFrom('whatsapp_sent_messages').select('message_id').where('account_id', '=', accountId).execute()).toEqual([
    { message_id: '3EB0RECENT' },
  ]);
  expect(await socket.retryReceipt(jid('60100000071'), sent!.messageId)).toBe(false);
});
