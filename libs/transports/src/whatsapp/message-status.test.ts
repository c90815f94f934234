import { EventEmitter } from 'node:events';
import { ManualClock } from '@metronome/core';
import { WAMessageStatus } from '@whiskeysockets/baileys';
import { MessageStatuses, type MessageRefusal, type ReceiptHooks } from './message-status.js';

// The statuses' listeners, fed the events Baileys' handleBadAck emits: a `messages.update`, or
// the sent message's own `messages.upsert` when the ack came while Baileys buffered its events.

function setup(hooks: ReceiptHooks = {}) {
  const clock = new ManualClock(1_000_000);
  const told: MessageRefusal[] = [];
  const statuses = new MessageStatuses(clock, (r) => told.push(r), hooks);
  const ev = new EventEmitter();
  statuses.follow((event, listener) => void ev.on(event, listener as (arg: unknown) => void), 'A');
  const ack = (id: string, params: string[], fromMe = true, remoteJid = '601@s.whatsapp.net') =>
    ev.emit('messages.update', [{ key: { remoteJid, fromMe, id }, update: { status: WAMessageStatus.ERROR, messageStubParameters: params } }]);
  return { clock, told, statuses, ev, ack };
}

test('only messages this replica wrote are told, with the chat id the send was given', () => {
  const { told, statuses, ack } = setup();
  statuses.track('A', 'M1', '601');
  ack('OTHER', ['479']);
  ack('M1', ['479'], false);
  ack('M1', ['479']);
  expect(told).toEqual([{ accountId: 'A', messageId: 'M1', chatId: '601', refusal: { kind: 'rejected', code: 'message_invalid' } }]);
});

test("a 463 is told as the refusal of that message, and to the hook that holds the account's new chats", () => {
  const held: string[] = [];
  const { told, statuses, ack } = setup({ onNewChatRefused: (a) => held.push(a) });
  statuses.track('A', 'M1', '601');
  ack('M1', ['463', 'restricted']);
  expect(told).toEqual([{ accountId: 'A', messageId: 'M1', chatId: '601', refusal: { kind: 'new-chat-refused', code: 'new_chat_refused' } }]);
  expect(held).toEqual(['A']);
});

test("an ack folded into the sent message's own upsert (Baileys' event buffer; the shape test/platforms/whatsapp-wire-server.test.ts sees from the real socket) is told too", () => {
  const { told, statuses, ev } = setup();
  statuses.track('A', 'M1', '601');
  const sent = (status: number, params?: string[]) => ({
    key: { remoteJid: '601@s.whatsapp.net', fromMe: true, id: 'M1' },
    message: { conversation: 'hi' },
    status,
    ...(params && { messageStubParameters: params }),
  });
  ev.emit('messages.upsert', { type: 'append', messages: [sent(WAMessageStatus.PENDING)] });
  expect(told).toEqual([]);
  ev.emit('messages.upsert', { type: 'append', messages: [sent(WAMessageStatus.ERROR, ['463'])] });
  expect(told).toEqual([{ accountId: 'A', messageId: 'M1', chatId: '601', refusal: { kind: 'new-chat-refused', code: 'new_chat_refused' } }]);
});

test("a refusal of a re-send (after a device's retry receipt, or addressed to one device) is not the message's: told apart, the chat's send stands", () => {
  const resends: MessageRefusal[] = [];
  const { told, statuses, ack } = setup({ onResendRefused: (r) => resends.push(r) });
  statuses.track('A', 'M1', '601');
  statuses.track('A', 'M2', '602');
  statuses.resending('A', 'M1');
  ack('M1', ['479']);
  ack('M2', ['479'], true, '602:1@s.whatsapp.net');
  expect(told).toEqual([]);
  expect(resends.map((r) => r.chatId)).toEqual(['601', '602']);
});
