import { DEVELOPMENT_SECRETS_KEY } from '@metronome/core';
import { AccountRepository, OptOutRepository } from '@metronome/db';
import { WhatsAppTransport } from '@metronome/transports/whatsapp';
import type { MessagePart } from '@metronome/db';
import { createLogger } from '@metronome/observability';
import { OptOutListener } from '../../services/sender/src/opt-outs.js';
import { RecordingDirectorySink } from '../helpers/recording-directory-sink.js';
import { driveRun } from '../helpers/sender-harness.js';
import { eventually } from '../helpers/test-env.js';
import { makePool, quietLogger, startWhatsAppHarness, type WhatsAppHarness } from './whatsapp-setup.js';

// Contacts WhatsApp names by LID: opt-outs and directory entries (`…@lid`): the reply reaches the real socket pool
// from a FAKE WhatsApp network that delivers it with the LID alone (no `remoteJidAlt`), and the
// pool reads the person's other identity from the account's LID mapping (Baileys keeps it in the
// auth key store: here real PostgreSQL). The sender's listener lists both identities, and the
// phone-number targets of every open run are skipped.

const text = (t: string): MessagePart => ({ type: 'text', text: t });
const jid = (phone: string) => `${phone}@s.whatsapp.net`;

let w: WhatsAppHarness;
let listener: OptOutListener;
const judging: Promise<unknown>[] = [];
const judged = async () => {
  while (judging.length > 0) await Promise.all(judging.splice(0));
};

beforeAll(async () => {
  w = await startWhatsAppHarness({}, {}, { onIncomingText: (accountId, message) => void judging.push(listener.handle(accountId, message)) });
  listener = new OptOutListener({
    repo: new OptOutRepository(w.h.tdb.db),
    clock: w.h.clock,
    logger: createLogger('lid-opt-out-test', 'silent'),
    metrics: w.h.metrics,
  });
});
afterAll(async () => {
  await w.close();
});

async function account() {
  const a = await w.seedPairedAccount({ groupConcurrency: 1 });
  await w.h.tdb.db
    .updateTable('accounts')
    .set({ opt_out_keywords: ['STOP'] })
    .where('id', '=', a.accountId)
    .execute();
  return a;
}

const suppressed = async (accountId: string) => (await new AccountRepository(w.h.tdb.db).suppressions(accountId, { limit: 100 })).map((s) => s.chatId);

test('STOP from a LID-only contact suppresses the phone-number target of every open run', async () => {
  const { tenantId, accountId } = await account();
  w.network.lids.assign('60100000041', '987650000041');
  // A first send to the phone number: Baileys' device lookup stores the person's LID pair.
  await driveRun(w.h, await w.h.seedRun({ tenantId, accountId, targets: ['60100000041', '60100000042'], parts: [text('hello')] }));
  // Two runs still open, naming the person by two spellings of the phone number.
  const open1 = await w.h.seedRun({ tenantId, accountId, targets: ['60100000041', '60100000042'], parts: [text('one')] });
  const open2 = await w.h.seedRun({ tenantId, accountId, targets: ['+60100000041'], parts: [text('two')] });

  w.network.fakeIncomingMessage(accountId, { from: '987650000041@lid', text: 'STOP' });
  await judged();
  expect(await suppressed(accountId)).toEqual(['+60100000041', '60100000041', '60100000041@s.whatsapp.net', '987650000041@lid']);
  for (const runId of [open1, open2]) {
    const targets = await w.h.targets(runId);
    expect(targets.find((t) => t.chat_id.endsWith('0041'))).toMatchObject({ status: 'skipped', error_code: 'suppressed' });
  }
  await driveRun(w.h, open1);
  await driveRun(w.h, open2);
  expect(w.network.messagesTo(jid('60100000041')).map((m) => m.content)).toEqual([{ text: 'hello' }]);
  expect(w.network.messagesTo(jid('60100000042')).map((m) => m.content)).toEqual([{ text: 'hello' }, { text: 'one' }]);
});

test('STOP by phone number also lists the LID, so a campaign naming the person by LID skips them', async () => {
  const { tenantId, accountId } = await account();
  w.network.lids.assign('60100000051', '987650000051');
  await driveRun(w.h, await w.h.seedRun({ tenantId, accountId, targets: ['60100000051'], parts: [text('hello')] }));
  const byLid = await w.h.seedRun({ tenantId, accountId, targets: ['987650000051@lid'], parts: [text('again')] });

  w.network.fakeIncomingMessage(accountId, { from: jid('60100000051'), text: 'stop' });
  await judged();
  expect(await suppressed(accountId)).toEqual(['+60100000051', '60100000051', '60100000051@s.whatsapp.net', '987650000051@lid']);
  expect((await w.h.targets(byLid))[0]).toMatchObject({ status: 'skipped', error_code: 'suppressed' });
});

test('a LID the mapping does not know is listed as it is', async () => {
  const { tenantId, accountId } = await account();
  await driveRun(w.h, await w.h.seedRun({ tenantId, accountId, targets: ['60100000061'], parts: [text('hello')] }));
  w.network.fakeIncomingMessage(accountId, { from: '987650000069@lid', text: 'STOP' });
  await judged();
  expect(await suppressed(accountId)).toEqual(['987650000069@lid']);
});

test('a STOP from a LID the mapping did not know reaches the phone-number target once the pair is learnt', async () => {
  const { tenantId, accountId } = await account();
  w.network.lids.assign('60100000071', '987650000071');
  await driveRun(w.h, await w.h.seedRun({ tenantId, accountId, targets: ['60100000072'], parts: [text('hello')] }));
  const open = await w.h.seedRun({ tenantId, accountId, targets: ['+60100000071', '60100000072'], parts: [text('later')] });
  w.network.fakeIncomingMessage(accountId, { from: '987650000071@lid', text: 'STOP' });
  await judged();
  expect(await suppressed(accountId)).toEqual(['987650000071@lid']);
  // WhatsApp tells the socket who the LID is (as a linked-profiles notification: Baileys
  // stores the pair in the account's key store), and the stored pair carries the STOP over.
  await w.network.openSocket(accountId)!.signalRepository.lidMapping.learn(jid('60100000071'));
  expect(await suppressed(accountId)).toEqual(['+60100000071', '60100000071', '60100000071@s.whatsapp.net', '987650000071@lid']);
  await driveRun(w.h, open);
  expect(w.network.messagesTo(jid('60100000071'))).toEqual([]);
  expect(w.network.messagesTo(jid('60100000072')).map((m) => m.content)).toEqual([{ text: 'hello' }, { text: 'later' }]);
});

test('the directory keeps a chat heard from by LID alone under the phone number the mapping knows', async () => {
  const sink = new RecordingDirectorySink();
  const pool = makePool(w.network, w.leases, w.auth, [DEVELOPMENT_SECRETS_KEY], w.h.clock, { directory: sink });
  const transport = new WhatsAppTransport({ pool, clock: w.h.clock, logger: quietLogger, timeoutMs: 5_000 });
  try {
    const { accountId } = await account();
    const acc = { id: accountId, externalId: null, credentials: null };
    w.network.lids.assign('60100000091', '987650000091');
    const send = { chatId: '60100000091', part: { type: 'text' as const, text: 'hello' }, partIndex: 0, partCount: 1, idempotencyKey: 'lid-dir:60100000091:0' };
    expect(await transport.send(acc, send)).toMatchObject({ kind: 'delivered' });
    w.network.fakeIncomingMessage(accountId, { from: '987650000091@lid', text: 'hi', pushName: 'Aisha' });
    // a LID the mapping does not know stays a LID entry
    w.network.fakeIncomingMessage(accountId, { from: '987650000099@lid', text: 'hello?', pushName: 'Unknown' });
    await eventually('both chats heard from', async () => sink.entry(accountId, '987650000099@lid') !== undefined, 5_000, 5);
    await eventually('the titled entry', async () => sink.entry(accountId, jid('60100000091'))?.title === 'Aisha', 5_000, 5);
    expect(sink.entry(accountId, '987650000091@lid')).toBeUndefined();
  } finally {
    await transport.close();
  }
});
