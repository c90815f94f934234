import { countRuns, ReceiptRepository, RunControlRepository, type MessagePart } from '@metronome/db';
import { eventually } from '../helpers/test-env.js';
import { Metrics } from '@metronome/observability';
import type { MessageReceipt } from '@metronome/transports/whatsapp';
import { ReceiptWriter } from '../../services/sender/src/receipt-writer.js';
import { DEVELOPMENT_SECRETS_KEY } from '@metronome/core';
import { makePool, quietLogger, startWhatsAppHarness, type WhatsAppHarness } from './whatsapp-setup.js';

// WhatsApp receipts (CONTRACT §3 "Receipts") through the real sender job, transport and socket
// pool to a FAKE WhatsApp network whose server sends receipts as Baileys emits them; the
// receipts are written to real PostgreSQL by the sender's writer.

const text = (t: string): MessagePart => ({ type: 'text', text: t });
const GROUP = '120363000000000001@g.us';
const DIRECT = '60111000001';
const member = (i: number) => `6019${String(i).padStart(7, '0')}@s.whatsapp.net`;

let w: WhatsAppHarness;
let writer: ReceiptWriter;
let tell: ((r: MessageReceipt) => void) | null = null;
const metrics = new Metrics('receipts-test');
beforeAll(async () => {
  w = await startWhatsAppHarness({}, {}, { onReceipt: (r) => tell?.(r), onIncomingText: (a, m) => writer.onReply(a, m) });
  writer = new ReceiptWriter(
    { repo: new ReceiptRepository(w.h.tdb.db), metrics, logger: quietLogger, flushEveryMs: 3_600_000, retryMs: 1_000, retries: 2, replyWindowMs: 3_600_000 },
    () => w.h.clock.now(),
  );
  tell = writer.onReceipt;
});
afterAll(async () => {
  await writer.close();
  await w.close();
});

/** Lets the socket's events reach the writer, then writes what is due, as its timer would. */
async function settle(): Promise<void> {
  await new Promise((r) => setImmediate(r));
  await writer.flush();
}

const counter = async (status: string) =>
  (await metrics.registry.getSingleMetric('metronome_receipts_total')!.get()).values.find(
    (v) => v.labels['status'] === status && v.labels['platform'] === 'whatsapp',
  )?.value ?? 0;

test('a group of 50 with 30 delivery and 10 read receipts shows 30/50 and 10/50; a one-to-one chat its times; twice counts once; an unknown id is ignored and counted', async () => {
  const { tenantId, accountId } = await w.seedPairedAccount({ maxSendPerMinute: 60_000 });
  // 50 members and the account itself (its own phone number): it goes to 50
  w.network.addGroup(GROUP, [...Array.from({ length: 50 }, (_, i) => member(i)), '60123456789@s.whatsapp.net']);
  const runId = await w.h.seedRun({ tenantId, accountId, targets: [GROUP, DIRECT], parts: [text('Meeting at 3')] });
  await w.h.runJob(runId);
  expect((await w.h.run(runId)).status).toBe('success');
  const groupMessage = w.network.messagesTo(GROUP)[0]!.messageId;
  const directMessage = w.network.messagesTo(`${DIRECT}@s.whatsapp.net`)[0]!.messageId;

  const sentAt = w.h.clock.now();
  // the receipts come in later than all the times they tell
  w.h.clock.advance(120_000);
  for (let i = 0; i < 30; i++) w.network.receipts.member(accountId, GROUP, groupMessage, member(i), 'delivered', sentAt + 2_000 + i * 1_000);
  for (let i = 0; i < 10; i++) w.network.receipts.member(accountId, GROUP, groupMessage, member(i), 'read', sentAt + 60_000 + i * 1_000);
  // told twice, and a later copy of a delivery: nothing moves
  w.network.receipts.member(accountId, GROUP, groupMessage, member(0), 'delivered', sentAt + 2_000);
  w.network.receipts.member(accountId, GROUP, groupMessage, member(0), 'delivered', sentAt + 90_000);
  // one-to-one: read first, then its delivery (out of order)
  w.network.receipts.direct(accountId, `${DIRECT}@s.whatsapp.net`, directMessage, 'read', sentAt + 20_000);
  w.network.receipts.direct(accountId, `${DIRECT}@s.whatsapp.net`, directMessage, 'delivered', sentAt + 5_000);
  // a message this account never sent
  w.network.receipts.direct(accountId, `${DIRECT}@s.whatsapp.net`, '3EB0FFFFFFFFFFFFFFFFFF', 'delivered');
  const unknownBefore = await counter('unknown');
  await settle();

  const rows = await new RunControlRepository(w.h.tdb.db).listTargets(runId, undefined, 10, undefined);
  const group = rows.find((t) => t.chatId === GROUP)!;
  expect({ deliveredTo: group.deliveredTo, readBy: group.readBy, memberCount: group.memberCount }).toEqual({ deliveredTo: 30, readBy: 10, memberCount: 50 });
  // the group's times: its first member's (WhatsApp stamps receipts in whole seconds)
  const second = (ms: number) => new Date(Math.floor(ms / 1000) * 1000);
  expect(group.deliveredAt).toEqual(second(sentAt + 2_000));
  expect(group.readAt).toEqual(second(sentAt + 60_000));
  const direct = rows.find((t) => t.chatId === DIRECT)!;
  expect({ deliveredAt: direct.deliveredAt, readAt: direct.readAt, deliveredTo: direct.deliveredTo }).toEqual({
    deliveredAt: second(sentAt + 5_000),
    readAt: second(sentAt + 20_000),
    deliveredTo: null,
  });

  // the unknown id is tried again (its send may not be recorded yet), then counted unknown
  expect(await counter('unknown')).toBe(unknownBefore);
  for (let i = 0; i < 3; i++) {
    w.h.clock.advance(1_000);
    await settle();
  }
  expect(await counter('unknown')).toBe(unknownBefore + 1);
  expect(await counter('delivered')).toBe(30 + 2 + 1);
  expect(await counter('read')).toBe(10 + 1);
});

test('a chat that writes within REPLY_WINDOW after the send replied (repliedAt, counts.replied); after the window it did not', async () => {
  const { tenantId, accountId } = await w.seedPairedAccount({ maxSendPerMinute: 60_000 });
  const runId = await w.h.seedRun({ tenantId, accountId, targets: ['60111000002', '60111000003'], parts: [text('Your order is ready')] });
  await w.h.runJob(runId);
  w.h.clock.advance(10 * 60_000);
  const repliedAt = w.h.clock.now();
  w.network.fakeIncomingMessage(accountId, { from: '60111000002@s.whatsapp.net', text: 'Thanks, coming at 5' });
  const rows = () => new RunControlRepository(w.h.tdb.db).listTargets(runId, undefined, 10, undefined);
  await eventually('the reply recorded', async () => (await rows()).find((t) => t.chatId === '60111000002')?.repliedAt ?? null, 10_000, 50);
  // past the window (1 h in this test): not a reply to this run
  w.h.clock.advance(3_600_000);
  w.network.fakeIncomingMessage(accountId, { from: '60111000003@s.whatsapp.net', text: 'Who is this?' });
  await new Promise((r) => setTimeout(r, 300));
  const after = await rows();
  expect(after.map((t) => [t.chatId, t.repliedAt])).toEqual([
    ['60111000002', new Date(repliedAt)],
    ['60111000003', null],
  ]);
  const counts = (await countRuns(w.h.tdb.db, [runId])).get(runId)!;
  expect(counts).toMatchObject({ sent: 2, replied: 1 });
});

test('after a restart, a receipt by LID for a send to the phone number lands, read from the stored LID mapping', async () => {
  const { tenantId, accountId } = await w.seedPairedAccount({ maxSendPerMinute: 60_000 });
  w.network.lids.assign('60111000061', '987650000061');
  // the send to the phone number: Baileys' device lookup stores the person's LID pair
  const runId = await w.h.seedRun({ tenantId, accountId, targets: ['60111000061'], parts: [text('Your table is booked')] });
  await w.h.runJob(runId);
  const messageId = w.network.messagesTo('60111000061@s.whatsapp.net')[0]!.messageId;

  // "Restarted": another pool (as a new sender process) takes the account's socket; it never
  // wrote the message, so only the auth state in PostgreSQL can tell whose LID it is.
  const restarted = makePool(w.network, w.leases, w.auth, [DEVELOPMENT_SECRETS_KEY], w.h.clock, { onReceipt: (r) => writer.onReceipt(r) });
  try {
    await eventually('the restarted pool holds the socket', async () => (await restarted.use(accountId, async () => true)).ok, 10_000, 20);
    const sentAt = w.h.clock.now();
    w.h.clock.advance(60_000);
    w.network.receipts.direct(accountId, '987650000061@lid', messageId, 'delivered', sentAt + 3_000);
    const rows = () => new RunControlRepository(w.h.tdb.db).listTargets(runId, undefined, 10, undefined);
    const delivered = await eventually(
      'the receipt written',
      async () => {
        await settle();
        return (await rows())[0]!.deliveredAt;
      },
      5_000,
      20,
    );
    expect(delivered).toEqual(new Date(Math.floor((sentAt + 3_000) / 1000) * 1000));
  } finally {
    await restarted.close();
  }
});
