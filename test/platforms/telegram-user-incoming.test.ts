import { gramjsClientFactory, type IncomingUserText, trustTelegramServerKey, type UserClient } from '@metronome/transports/telegram-user';
import { Api, helpers, TelegramClient } from 'telegram';
import { NewMessage, type NewMessageEvent } from 'telegram/events/index.js';
import { Logger, LogLevel } from 'telegram/extensions/Logger.js';
import { StringSession } from 'telegram/sessions/index.js';
import { eventually } from '../helpers/test-env.js';
import { WireTelegram } from '../helpers/wire-telegram.js';

// What a person writes to a telegram_user account, on the wire: the FAKE Telegram
// (test/helpers/wire-telegram.ts `writeToAccount`) sends it as Telegram does, and the REAL GramJS
// client turns it into its NewMessage event — `updateShortMessage` for a user the account knows,
// `updates` with `updateNewMessage` and the user (its access hash learnt) for one it does not, only
// to a session that called a method. Then the account's client as the sender builds it
// (gramjsClientFactory with onIncomingText) hands each private text on, with its chat ids.

let fake: WireTelegram;
const closers: Array<() => Promise<unknown>> = [];
let nextPhone = 447_700_200_000;

beforeAll(async () => {
  fake = new WireTelegram();
  await fake.start();
  trustTelegramServerKey(fake.serverKeyPem);
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});
afterAll(async () => {
  await fake?.close();
});

/** an account signed in on the fake, and a person (with a username) in its dialogs, and one who is not */
async function accountWithPeople() {
  const phone = `+${nextPhone++}`;
  const userId = fake.addUser(phone);
  const known = fake.addUser(`+${nextPhone++}`, { username: 'Known_Person', firstName: 'Kay' });
  const stranger = fake.addUser(`+${nextPhone++}`, { username: 'Stranger_X', firstName: 'Sam' });
  fake.setDialogs(userId, [{ kind: 'user', id: known, firstName: 'Kay', username: 'Known_Person' }]);
  return { userId, known, stranger, session: await fake.signedInSession(phone) };
}

async function rawClient(session: string): Promise<{ client: TelegramClient; events: NewMessageEvent[] }> {
  const client = new TelegramClient(new StringSession(session), 1, 'wire', { connectionRetries: 1, baseLogger: new Logger(LogLevel.NONE) });
  closers.push(() => client.destroy());
  const events: NewMessageEvent[] = [];
  client.addEventHandler((e: NewMessageEvent) => void events.push(e), new NewMessage({}));
  await client.connect();
  return { client, events };
}

test('GramJS reads both forms Telegram sends: updateShortMessage for a known user, updates with the user (its access hash learnt) for a stranger; none before the session called a method', async () => {
  const { userId, known, stranger, session } = await accountWithPeople();
  const { client, events } = await rawClient(session);

  // connected, help.getConfig only: Telegram sends this session no updates yet
  expect(fake.writeToAccount(known, userId, 'lost').connectionId).toBeNull();
  await client.invoke(new Api.updates.GetState());

  const short = fake.writeToAccount(known, userId, 'hello there');
  expect(short).toMatchObject({ form: 'short', text: 'hello there' });
  expect(short.connectionId).not.toBeNull();
  await eventually('the short message as a NewMessage event', async () => events.length === 1, 5_000, 10);
  expect(events[0]!.originalUpdate).toBeInstanceOf(Api.UpdateShortMessage);
  expect(events[0]!.message).toMatchObject({ id: short.id, out: false, message: 'hello there' });
  expect(events[0]!.isPrivate).toBe(true);
  expect(events[0]!.message.peerId).toBeInstanceOf(Api.PeerUser);
  expect(`${(events[0]!.message.peerId as Api.PeerUser).userId}`).toBe(known);

  const full = fake.writeToAccount(stranger, userId, 'who is this?');
  expect(full).toMatchObject({ form: 'updates', id: short.id + 1, pts: short.pts + 1 });
  await eventually('the updates form as a NewMessage event', async () => events.length === 2, 5_000, 10);
  expect(events[1]!.originalUpdate).toBeInstanceOf(Api.UpdateNewMessage);
  expect(events[1]!.message).toMatchObject({ out: false, message: 'who is this?' });
  expect(`${events[1]!.message.senderId}`).toBe(stranger);
  // the user came with its access hash: GramJS addresses the stranger with no request
  const before = fake.wire.requests.length;
  const input = (await client.getInputEntity(helpers.returnBigInt(stranger))) as Api.InputPeerUser;
  expect(`${input.accessHash}`).toBe(fake.accessHashOf(userId, stranger));
  expect(fake.wire.requests.length).toBe(before);
  // the account's updates state counts what it received
  expect((await client.invoke(new Api.updates.GetState())).pts).toBe(full.pts);
});

test("the account's client as the sender builds it hands on each private text with its chat ids: the id, and @username in lower case when the update names the user", async () => {
  const { userId, known, stranger, session } = await accountWithPeople();
  const texts: IncomingUserText[] = [];
  const client: UserClient = gramjsClientFactory(session, { apiId: 1, apiHash: 'wire', onIncomingText: (m) => void texts.push(m) });
  closers.push(() => client.disconnect());
  await client.connect();

  // connect() itself made the session one Telegram sends updates to
  expect(fake.writeToAccount(known, userId, 'STOP').connectionId).not.toBeNull();
  fake.writeToAccount(stranger, userId, ' Stop ');
  await eventually('both texts handed on', async () => texts.length === 2, 5_000, 10);
  expect(texts).toEqual([
    { chatIds: [known], text: 'STOP' },
    { chatIds: [stranger, '@stranger_x'], text: ' Stop ' },
  ]);
});
