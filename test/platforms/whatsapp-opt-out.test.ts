import { AccountRepository, OptOutRepository } from '@metronome/db';
import type { MessagePart } from '@metronome/db';
import { createLogger } from '@metronome/observability';
import { OptOutListener } from '../../services/sender/src/opt-outs.js';
import { driveRun } from '../helpers/sender-harness.js';
import { eventually } from '../helpers/test-env.js';
import { startWhatsAppHarness, type WhatsAppHarness } from './whatsapp-setup.js';

// Opt-out by reply (CONTRACT §3, accounts: optOutKeywords): replies reach the real socket pool
// from a FAKE WhatsApp network, the sender's listener lists the chat, and the real sender job
// skips it — in the same setup as whatsapp-send.test.ts.

const text = (t: string): MessagePart => ({ type: 'text', text: t });
const jid = (phone: string) => `${phone}@s.whatsapp.net`;

let w: WhatsAppHarness;
let listener: OptOutListener;
/** every reply the listener was told of, until judged (the pool does not wait for it) */
const judging: Promise<unknown>[] = [];
const judged = async () => {
  while (judging.length > 0) await Promise.all(judging.splice(0));
};

beforeAll(async () => {
  w = await startWhatsAppHarness({}, {}, { onIncomingText: (accountId, message) => void judging.push(listener.handle(accountId, message)) });
  listener = new OptOutListener({
    repo: new OptOutRepository(w.h.tdb.db),
    clock: w.h.clock,
    logger: createLogger('opt-out-test', 'silent'),
    metrics: w.h.metrics,
  });
});
afterAll(async () => {
  await w.close();
});

/** A paired WhatsApp account with the keywords a new one gets from the API. */
async function account(keywords = ['STOP', 'UNSUBSCRIBE']) {
  const a = await w.seedPairedAccount({ groupConcurrency: 1 });
  await w.h.tdb.db.updateTable('accounts').set({ opt_out_keywords: keywords }).where('id', '=', a.accountId).execute();
  return a;
}

/** What GET /v1/accounts/{id}/suppressions lists (the route answers these rows as they are). */
const suppressions = async (accountId: string) =>
  (await new AccountRepository(w.h.tdb.db).suppressions(accountId, { limit: 100 })).map((s) => ({ chatId: s.chatId, reason: s.reason }));

const optOuts = async () => (await w.h.metrics.optOuts.get()).values.find((v) => v.labels.platform === 'whatsapp')?.value ?? 0;

test('a "stop" reply lists the chat (opt_out) under its spellings, and a later run skips it', async () => {
  const { tenantId, accountId } = await account();
  const chats = ['60100000011', '60100000012'];
  await driveRun(w.h, await w.h.seedRun({ tenantId, accountId, targets: chats, parts: [text('hello')] }));
  expect(w.pool.isOpen(accountId)).toBe(true);
  const before = await optOuts();

  w.network.fakeIncomingMessage(accountId, { from: jid('60100000011'), text: ' stop ' });
  await judged();
  expect(await suppressions(accountId)).toEqual([
    { chatId: '+60100000011', reason: 'opt_out' },
    { chatId: '60100000011', reason: 'opt_out' },
    { chatId: '60100000011@s.whatsapp.net', reason: 'opt_out' },
  ]);
  expect(await optOuts()).toBe(before + 1);

  const later = await w.h.seedRun({ tenantId, accountId, targets: chats, parts: [text('again')] });
  await driveRun(w.h, later);
  expect(await w.h.targets(later)).toEqual([
    expect.objectContaining({ chat_id: '60100000011', status: 'skipped', error_code: 'suppressed' }),
    expect.objectContaining({ chat_id: '60100000012', status: 'sent' }),
  ]);
  expect(w.network.messagesTo(jid('60100000011')).map((m) => m.content)).toEqual([{ text: 'hello' }]);
  expect(w.network.messagesTo(jid('60100000012')).map((m) => m.content)).toEqual([{ text: 'hello' }, { text: 'again' }]);
});

test("a sentence, the account's own message, a group member's message and an account without keywords list nothing", async () => {
  const { tenantId, accountId } = await account();
  const silent = await account([]);
  const chats = ['60100000021', '60100000022'];
  const group = '120363000000000021@g.us';
  w.network.addGroup(group, [jid('60100000021')]);
  await driveRun(w.h, await w.h.seedRun({ tenantId, accountId, targets: [...chats, group], parts: [text('hello')] }));
  await driveRun(w.h, await w.h.seedRun({ tenantId: silent.tenantId, accountId: silent.accountId, targets: chats, parts: [text('hello')] }));

  w.network.fakeIncomingMessage(accountId, { from: jid('60100000021'), text: 'stop it please' });
  w.network.fakeIncomingMessage(accountId, { from: jid('60100000022'), text: 'STOP', fromMe: true });
  w.network.fakeIncomingMessage(accountId, { from: group, participant: jid('60100000021'), text: 'STOP' });
  w.network.fakeIncomingMessage(silent.accountId, { from: jid('60100000021'), text: 'STOP' });
  await judged();
  expect(await suppressions(accountId)).toEqual([]);
  expect(await suppressions(silent.accountId)).toEqual([]);

  const later = await w.h.seedRun({ tenantId, accountId, targets: [...chats, group], parts: [text('again')] });
  await driveRun(w.h, later);
  for (const t of await w.h.targets(later)) expect(t.status).toBe('sent');
});

test('a reply written while no socket was open is read when the socket next connects, and skips the chat in the run under way', async () => {
  const { tenantId, accountId } = await account();
  const chats = ['60100000031', '60100000032', '60100000033'];
  // never connected yet: WhatsApp holds the reply for the device
  w.network.fakeIncomingMessage(accountId, { from: jid('60100000033'), text: 'Unsubscribe' });
  expect(w.pool.isOpen(accountId)).toBe(false);

  const runId = await w.h.seedRun({ tenantId, accountId, targets: chats, parts: [text('news')] });
  // The first send holds the socket open while the held reply is judged.
  const release = w.network.holdSends(accountId);
  const job = w.h.runJob(runId);
  await eventually('the first message reached the server', async () => w.network.messages.some((m) => m.accountId === accountId), 5_000, 10);
  await judged();
  expect(await suppressions(accountId)).toContainEqual({ chatId: '60100000033', reason: 'opt_out' });
  release();
  await job;
  await driveRun(w.h, runId);

  expect(await w.h.targets(runId)).toEqual([
    expect.objectContaining({ chat_id: '60100000031', status: 'sent' }),
    expect.objectContaining({ chat_id: '60100000032', status: 'sent' }),
    expect.objectContaining({ chat_id: '60100000033', status: 'skipped', error_code: 'suppressed' }),
  ]);
  expect(w.network.messagesTo(jid('60100000033'))).toEqual([]);
});
