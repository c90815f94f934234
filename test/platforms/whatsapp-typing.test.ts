import type { MessagePart } from '@metronome/db';
import { driveRun } from '../helpers/sender-harness.js';
import { startWhatsAppHarness, type WhatsAppHarness } from './whatsapp-setup.js';

// Typing first on WhatsApp (CONTRACT §3, accounts: typing): the real sender job, transport and
// socket pool against a FAKE WhatsApp network that records each presence with the manual
// clock's time, in the same setup as whatsapp-send.test.ts.

const text = (t: string): MessagePart => ({ type: 'text', text: t });
const jid = (phone: string) => `${phone}@s.whatsapp.net`;
/** 30 characters at 10 a second: 3 s of typing */
const THIRTY = 'x'.repeat(30);

let w: WhatsAppHarness;
beforeAll(async () => {
  w = await startWhatsAppHarness();
});
afterAll(async () => {
  await w.close();
});

/** A paired account sending 6 a minute (10 s apart), one chat at a time, with `typing`. */
async function account(typing: { charsPerSecond: number; maxSeconds: number } | null) {
  const a = await w.seedPairedAccount({ groupConcurrency: 1, maxSendPerMinute: 6 });
  await w.h.tdb.db
    .updateTable('accounts')
    .set({ typing: typing && JSON.stringify(typing) })
    .where('id', '=', a.accountId)
    .execute();
  return a;
}

const sent = (accountId: string) => w.network.messages.filter((m) => m.accountId === accountId);
const composing = (accountId: string, chat: string) =>
  w.network.presences.filter((p) => p.accountId === accountId && p.jid === jid(chat) && p.presence === 'composing');

test('composing precedes each message by the typing time, taken from the pace: the messages keep their 10 s', async () => {
  const { tenantId, accountId } = await account({ charsPerSecond: 10, maxSeconds: 5 });
  const chats = ['60100000051', '60100000052', '60100000053'];
  const start = w.h.clock.now();
  const runId = await w.h.seedRun({ tenantId, accountId, targets: chats, parts: [text(THIRTY)] });
  await driveRun(w.h, runId);
  expect((await w.h.run(runId)).status).toBe('success');

  const messages = sent(accountId);
  expect(messages.map((m) => m.jid)).toEqual(chats.map(jid));
  for (const [i, chat] of chats.entries()) {
    const shown = composing(accountId, chat);
    expect(shown).toHaveLength(1);
    const lead = messages[i]!.at - shown[0]!.at;
    expect(lead).toBeGreaterThanOrEqual(3_000);
    expect(lead).toBeLessThan(3_100);
  }
  // idle account: the first message simply goes 3 s later
  expect(messages[0]!.at - start).toBeGreaterThanOrEqual(3_000);
  for (let i = 1; i < messages.length; i++) {
    const gap = messages[i]!.at - messages[i - 1]!.at;
    // never faster than the pace, and the typing is not added to it (that would be 13 s)
    expect(gap).toBeGreaterThanOrEqual(10_000);
    expect(gap).toBeLessThan(11_000);
  }
});

test('typing is capped at maxSeconds, and a media without caption types a short fixed time', async () => {
  const { tenantId, accountId } = await account({ charsPerSecond: 10, maxSeconds: 2 });
  const mediaId = await w.h.seedMedia(tenantId, Buffer.from('a picture'), 'image/png');
  const runId = await w.h.seedRun({ tenantId, accountId, targets: ['60100000061'], parts: [text('y'.repeat(500)), { type: 'media', mediaId }] });
  await driveRun(w.h, runId);
  const [first, second] = sent(accountId);
  const [typedText, typedMedia] = composing(accountId, '60100000061');
  expect(first!.at - typedText!.at).toBe(2_000);
  expect(second!.at - typedMedia!.at).toBe(1_500);
});

test('an account with typing null shows no presence', async () => {
  const { tenantId, accountId } = await account(null);
  const runId = await w.h.seedRun({ tenantId, accountId, targets: ['60100000071', '60100000072'], parts: [text(THIRTY)] });
  await driveRun(w.h, runId);
  expect(sent(accountId)).toHaveLength(2);
  expect(w.network.presences.filter((p) => p.accountId === accountId)).toEqual([]);
});

test('no presence while rate-overlimit holds the account, and the first send after it goes without typing', async () => {
  const { tenantId, accountId } = await account({ charsPerSecond: 10, maxSeconds: 5 });
  const chats = ['60100000081', '60100000082'];
  const runId = await w.h.seedRun({ tenantId, accountId, targets: chats, parts: [text(THIRTY)] });
  w.network.failNext(accountId, 'rate-overlimit');
  expect(await w.h.runJob(runId)).toBe('deferred');
  const refusedAt = w.h.clock.now();
  const row = await w.h.tdb.db.selectFrom('accounts').select('blocked_until').where('id', '=', accountId).executeTakeFirstOrThrow();
  const until = row.blocked_until!.getTime();
  expect(until).toBeGreaterThan(refusedAt);
  w.h.clock.set(until);
  await driveRun(w.h, runId);
  expect((await w.h.run(runId)).status).toBe('success');

  const presences = w.network.presences.filter((p) => p.accountId === accountId);
  expect(presences.filter((p) => p.at > refusedAt && p.at < until)).toEqual([]);
  // the refused chat was typed to once, before the refusal
  expect(composing(accountId, chats[0]!).map((p) => p.at)).toEqual([refusedAt - 3_000]);
  // the job after the wait sends its first message at once, without typing (the other chat,
  // due before the refused one); the refused chat, back from the wait, goes without typing too
  expect(w.network.messagesTo(jid(chats[1]!))[0]!.at).toBe(until);
  expect(composing(accountId, chats[1]!)).toEqual([]);
  expect(w.network.messagesTo(jid(chats[0]!))[0]!.at).toBeGreaterThanOrEqual(until + 10_000);
});
