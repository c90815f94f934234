import { Api, helpers } from 'telegram';
import { incomingUserText, userChatIds, withKeptUsername } from './incoming.js';
import { MemoryPeerStore } from './peers.js';

// Which messages GramJS's NewMessage event builds are a person's private text to the account,
// and the chat ids a campaign may have named that person by.

const big = (x: string) => helpers.returnBigInt(x);
const message = (o: Partial<ConstructorParameters<typeof Api.Message>[0]> = {}) =>
  new Api.Message({ id: 1, date: 0, peerId: new Api.PeerUser({ userId: big('42') }), message: 'STOP', ...o });
const user = new Api.User({ id: big('42'), accessHash: big('9'), username: 'Ann_B' });

test('a private text from a user is read, with its @username in lower case (how a target in any case is compared) when the update names the user', () => {
  expect(incomingUserText(message(), new Map())).toEqual({ chatIds: ['42'], text: 'STOP' });
  expect(incomingUserText(message(), new Map([['42', user]]))).toEqual({ chatIds: ['42', '@ann_b'], text: 'STOP' });
  // a text with a link preview is still a text
  expect(incomingUserText(message({ media: new Api.MessageMediaWebPage({ webpage: new Api.WebPageEmpty({ id: big('1') }) }) }), undefined)).toMatchObject({
    text: 'STOP',
  });
});

test('outgoing messages, groups, channels, media captions, empty texts and service messages are not', () => {
  expect(incomingUserText(message({ out: true }), undefined)).toBeNull();
  expect(incomingUserText(message({ peerId: new Api.PeerChat({ chatId: big('7') }), fromId: new Api.PeerUser({ userId: big('42') }) }), undefined)).toBeNull();
  expect(incomingUserText(message({ peerId: new Api.PeerChannel({ channelId: big('7') }) }), undefined)).toBeNull();
  expect(incomingUserText(message({ media: new Api.MessageMediaPhoto({}) }), undefined)).toBeNull();
  expect(incomingUserText(message({ message: '' }), undefined)).toBeNull();
  expect(
    incomingUserText(
      new Api.MessageService({ id: 1, date: 0, peerId: new Api.PeerUser({ userId: big('42') }), action: new Api.MessageActionEmpty() }),
      undefined,
    ),
  ).toBeNull();
});

test("the account's kept peers add the username an updateShortMessage does not name, looked up once", async () => {
  const store = new MemoryPeerStore();
  await store.save('acc', [{ chatId: '42', kind: 'user', accessHash: '9', username: 'ann_b' }]);
  let finds = 0;
  const counted = { find: (a: string, c: string) => (finds++, store.find(a, c)), save: store.save.bind(store) };
  const m = withKeptUsername('acc', { chatIds: ['42'], text: 'hi' }, counted);
  expect(m.chatIds).toEqual(['42']);
  expect(await m.allChatIds!()).toEqual(['42', '@ann_b']);
  await m.allChatIds!();
  expect(finds).toBe(1);
  expect(userChatIds('42', [null, undefined])).toEqual(['42']);
  expect(userChatIds('42', ['Ann_B', 'ann_b'])).toEqual(['42', '@ann_b']);
});
