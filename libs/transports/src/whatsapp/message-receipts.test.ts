import { WAMessageStatus } from '@whiskeysockets/baileys';
import { chatIdsOf, directReceipt, groupMemberCount, memberReceipt } from './message-receipts.js';

// What Baileys' receipt events say, read as receipts (shapes of Socket/messages-recv.js handleReceipt).

const key = (fromMe = true) => ({ remoteJid: '601@s.whatsapp.net', fromMe, id: 'M1' });
const NOW = Date.UTC(2026, 0, 1, 12);

test('one-to-one: delivery, read and played are receipts at their time; server acks, errors and others are not', () => {
  expect(directReceipt(key(), { status: WAMessageStatus.DELIVERY_ACK, messageTimestamp: NOW / 1000 - 60 }, NOW)).toEqual({
    status: 'delivered',
    at: new Date(NOW - 60_000),
  });
  expect(directReceipt(key(), { status: WAMessageStatus.READ, messageTimestamp: NOW / 1000 - 5 }, NOW)).toEqual({ status: 'read', at: new Date(NOW - 5_000) });
  expect(directReceipt(key(), { status: WAMessageStatus.PLAYED, messageTimestamp: NOW / 1000 }, NOW)?.status).toBe('read');
  expect(directReceipt(key(), { status: WAMessageStatus.SERVER_ACK }, NOW)).toBeNull();
  expect(directReceipt(key(), { status: WAMessageStatus.ERROR }, NOW)).toBeNull();
  expect(directReceipt(key(false), { status: WAMessageStatus.READ }, NOW)).toBeNull();
  // no time, or one ahead of ours: now
  expect(directReceipt(key(), { status: WAMessageStatus.DELIVERY_ACK }, NOW)?.at).toEqual(new Date(NOW));
  expect(directReceipt(key(), { status: WAMessageStatus.DELIVERY_ACK, messageTimestamp: NOW / 1000 + 3600 }, NOW)?.at).toEqual(new Date(NOW));
});

test('groups: a member delivered or read (played counts as read)', () => {
  const k = { remoteJid: '1203@g.us', fromMe: true, id: 'M2', participant: '602@s.whatsapp.net' };
  expect(memberReceipt(k, { userJid: '602@s.whatsapp.net', receiptTimestamp: NOW / 1000 }, NOW)).toEqual({
    member: '602@s.whatsapp.net',
    status: 'delivered',
    at: new Date(NOW),
  });
  expect(memberReceipt(k, { userJid: '602@s.whatsapp.net', readTimestamp: NOW / 1000 }, NOW)?.status).toBe('read');
  expect(memberReceipt(k, { userJid: '602@s.whatsapp.net', playedTimestamp: NOW / 1000 }, NOW)?.status).toBe('read');
  expect(memberReceipt(k, { userJid: null, receiptTimestamp: NOW / 1000 }, NOW)).toBeNull();
});

test('the chat ids a JID may be named by, and a group counted without the account', () => {
  expect(chatIdsOf('60123456789@s.whatsapp.net')).toEqual(['60123456789@s.whatsapp.net', '+60123456789', '60123456789']);
  expect(chatIdsOf('1203@g.us')).toEqual(['1203@g.us']);
  const group = { participants: [{ id: '601@s.whatsapp.net' }, { id: '602@s.whatsapp.net' }, { id: '99@lid', phoneNumber: '60123@s.whatsapp.net' }] };
  expect(groupMemberCount(group, { id: '60123:3@s.whatsapp.net' })).toBe(2);
  expect(groupMemberCount(group, undefined)).toBe(3);
  expect(groupMemberCount(undefined, undefined)).toBeNull();
});
