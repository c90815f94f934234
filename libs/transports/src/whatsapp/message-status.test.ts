import { EventEmitter } from 'node:events';
import { ManualClock } from '@metronome/core';
import { WAMessageStatus } from '@whiskeysockets/baileys';
import { MessageStatuses, type MessageRefusal } from './message-status.js';

// The statuses' listeners, fed the events Baileys' handleBadAck emits: a `messages.update`, or
// the sent message's own `messages.upsert` when the ack came while Baileys buffered its events.

function setup() {
  const clock = new ManualClock(1_000_000);
  const told: MessageRefusal[] = [];
  const statuses = new MessageStatuses(clock, (r) => told.push(r));
  const ev = new EventEmitter();
  statuses.follow((event, listener) => void ev.on(event, listener as (arg: unknown) => void), 'A');
  const ack = (id: string, params: string[], fromMe = true) =>
    ev.emit('messages.update', [
      { key: { remoteJid: '601@s.whatsapp.net', fromMe, id }, update: { status: WAMessageStatus.ERROR, messageStubParameters: params } },
    ]);
  return { clock, told, statuses, ev, ack };
}

test('only messages this replica wrote are told, with the chat id the send was given', () => {
  const { told, statuses, ack } = setup();
  statuses.track('A', 'M1', '601@s.whatsapp.net', '601');
  ack('OTHER', ['479']);
  ack('M1', ['479'], false);
  ack('M1', ['479']);
  expect(told).toEqual([{ accountId: 'A', messageId: 'M1', chatId: '601', refusal: { kind: 'rejected', code: 'message_invalid' } }]);
});

test("a 463 holds the account's next send once; a mark no send took within a minute is dropped", () => {
  const { clock, statuses, ack } = setup();
  statuses.track('A', 'M1', '601@s.whatsapp.net', '601');
  statuses.track('A', 'M2', '601@s.whatsapp.net', '601');
  ack('M1', ['463', 'Your account has been restricted']);
  expect(statuses.holdBeforeWrite('A', '602@s.whatsapp.net')).toMatchObject({ kind: 'account-unavailable', code: 'account_restricted' });
  expect(statuses.holdBeforeWrite('A', '602@s.whatsapp.net')).toBeNull();
  ack('M2', ['463']);
  clock.advance(60_000);
  expect(statuses.holdBeforeWrite('A', '602@s.whatsapp.net')).toBeNull();
});

test('a reachout time lock holds one-to-one chats never written to, until it ends or is lifted', () => {
  const { clock, statuses, ev } = setup();
  statuses.track('A', 'M1', '601@s.whatsapp.net', '601');
  ev.emit('connection.update', { reachoutTimeLock: { isActive: true, timeEnforcementEnds: new Date(clock.now() + 5_000) } });
  expect(statuses.holdBeforeWrite('A', '602@s.whatsapp.net')).toEqual({ kind: 'chat-wait', code: 'reachout_time_lock', retryAfterMs: 5_000 });
  expect(statuses.holdBeforeWrite('A', '601@s.whatsapp.net')).toBeNull();
  expect(statuses.holdBeforeWrite('A', '1203@g.us')).toBeNull();
  ev.emit('connection.update', { reachoutTimeLock: { isActive: false } });
  expect(statuses.holdBeforeWrite('A', '602@s.whatsapp.net')).toBeNull();
});

test("an ack folded into the sent message's own upsert (Baileys' event buffer; the shape test/platforms/whatsapp-wire-server.test.ts sees from the real socket) is told too", () => {
  const { told, statuses, ev } = setup();
  statuses.track('A', 'M1', '601@s.whatsapp.net', '601');
  const sent = (status: number, params?: string[]) => ({
    key: { remoteJid: '601@s.whatsapp.net', fromMe: true, id: 'M1' },
    message: { conversation: 'hi' },
    status,
    ...(params && { messageStubParameters: params }),
  });
  ev.emit('messages.upsert', { type: 'append', messages: [sent(WAMessageStatus.PENDING)] });
  expect(told).toEqual([]);
  ev.emit('messages.upsert', { type: 'append', messages: [sent(WAMessageStatus.ERROR, ['463'])] });
  expect(told).toEqual([{ accountId: 'A', messageId: 'M1', chatId: '601', refusal: { kind: 'account-restricted', code: 'account_restricted' } }]);
});
