import { driveRun } from '../helpers/sender-harness.js';
import { dialogsOf, startTelegramUserHarness, type TelegramUserHarness } from './telegram-user-setup.js';

// Forum topics on a telegram_user account: the sender job sends one chat's topics and its
// General as separate targets, each into its topic (a reply to the topic's top message) with a
// random_id of its own, through the REAL GramJS client, judged from the record of the FAKE
// Telegram on the wire (what it took).

let t: TelegramUserHarness;
beforeAll(async () => {
  t = await startTelegramUserHarness();
}, 30_000);
afterAll(async () => t?.close());

test("one chat in two topics and in General: three messages, each where it was addressed, none answered as another's repeat", async () => {
  const chat = '-1003000001';
  const account = await t.seedSignedIn({ dialogs: dialogsOf([chat], { forum: true }) });
  const runId = await t.h.seedRun({ ...account, targets: [chat, chat, chat], threads: [5, 0, 6], parts: [{ type: 'text', text: 'news' }] });
  await driveRun(t.h, runId);
  expect((await t.h.targets(runId)).map((x) => x.status)).toEqual(['sent', 'sent', 'sent']);
  const taken = t.fake.messagesOf(account.userId).map((m) => [m.chatId, m.topic, m.text]);
  expect(taken).toHaveLength(3);
  expect(taken).toEqual(
    expect.arrayContaining([
      [chat, 5, 'news'],
      [chat, 6, 'news'],
      [chat, null, 'news'],
    ]),
  );
  // a repeat of a random_id would be answered with the first message (or refused while it is processed)
  expect([t.fake.duplicatesAnswered, t.fake.duplicatesRefused]).toEqual([0, 0]);
});
