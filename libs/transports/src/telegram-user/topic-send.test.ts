import { Api, helpers } from 'telegram';
import type { UserClientPool } from './client-pool.js';
import { TelegramUserTransport } from './telegram-user-transport.js';
import type { UserClient } from './user-client.js';

// A forum topic through GramJS: the request the transport asks GramJS's client to make. A topic
// is posted into as a reply to its top message (Telegram's api/forum: reply_to_msg_id = the
// topic's id; top_msg_id is only for a reply to another message inside it); no topic, no reply.

const peer = new Api.InputPeerChannel({ channelId: helpers.returnBigInt(2000), accessHash: helpers.returnBigInt(7) });

function transportAsking(): { transport: TelegramUserTransport; asked: Api.AnyRequest[] } {
  const asked: Api.AnyRequest[] = [];
  const client = {
    getInputEntity: async () => peer,
    invoke: async (request: Api.AnyRequest) => {
      asked.push(request);
      return new Api.Updates({ updates: [new Api.UpdateMessageID({ id: 41, randomId: helpers.returnBigInt(1) })], users: [], chats: [], date: 0, seq: 0 });
    },
  } as unknown as UserClient;
  const pool = {
    client: async () => client,
    heldElsewhere: async () => false,
    drop: async () => undefined,
    closedHere: () => false,
  } as unknown as UserClientPool;
  return { transport: new TelegramUserTransport({ pool }), asked };
}

const account = { id: 'acc', externalId: '1', credentials: { session: 'session-string' } };
const message = (threadId: number | undefined, part: Parameters<TelegramUserTransport['send']>[1]['part']) => ({
  chatId: '-1002000',
  ...(threadId !== undefined && { threadId }),
  part,
  partIndex: 0,
  partCount: 1,
  idempotencyKey: `run:-1002000${threadId ? `/${threadId}` : ''}:0`,
});

test('a text to a topic is messages.sendMessage replying to the topic, without top_msg_id', async () => {
  const { transport, asked } = transportAsking();
  expect(await transport.send(account, message(12, { type: 'text', text: 'news' }))).toEqual({ kind: 'delivered', messageId: '41' });
  const [request] = asked;
  expect(request).toBeInstanceOf(Api.messages.SendMessage);
  const replyTo = (request as Api.messages.SendMessage).replyTo;
  expect(replyTo).toBeInstanceOf(Api.InputReplyToMessage);
  expect((replyTo as Api.InputReplyToMessage).replyToMsgId).toBe(12);
  expect((replyTo as Api.InputReplyToMessage).topMsgId).toBeUndefined();
  // as it goes on the wire: GramJS serialises the reply with its flags
  expect(request!.getBytes().includes(replyTo!.getBytes())).toBe(true);
});

test('a media to a topic is messages.sendMedia replying to the topic', async () => {
  const { transport, asked } = transportAsking();
  const ref = 'photo:1:2:AA==';
  await transport.send(account, message(12, { type: 'media', mediaRef: ref, caption: 'c', contentType: 'image/png', filename: null }));
  const request = asked[0] as Api.messages.SendMedia;
  expect(request).toBeInstanceOf(Api.messages.SendMedia);
  expect((request.replyTo as Api.InputReplyToMessage).replyToMsgId).toBe(12);
});

test('without a topic, nothing is replied to (the chat itself, General in a forum)', async () => {
  const { transport, asked } = transportAsking();
  await transport.send(account, message(undefined, { type: 'text', text: 'plain' }));
  expect((asked[0] as Api.messages.SendMessage).replyTo).toBeUndefined();
});

test('typing before a part to a topic is messages.setTyping naming the topic (top_msg_id)', async () => {
  const { transport, asked } = transportAsking();
  await transport.showTyping(account, '-1002000', { type: 'text', text: 'x' }, 12);
  await transport.showTyping(account, '-1002000', { type: 'text', text: 'x' });
  const [inTopic, inChat] = asked as Api.messages.SetTyping[];
  expect(inTopic).toBeInstanceOf(Api.messages.SetTyping);
  expect(inTopic!.topMsgId).toBe(12);
  expect(inChat!.topMsgId).toBeUndefined();
});
