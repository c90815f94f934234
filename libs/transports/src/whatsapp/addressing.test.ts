import { chatJid, whatsappMessageId } from './addressing.js';

test('a message id is a function of its idempotency key, shaped like WhatsApp Web ids', () => {
  const id = whatsappMessageId('run-1:120363000000000001@g.us:0');
  expect(id).toMatch(/^3EB0[0-9A-F]{18}$/);
  expect(whatsappMessageId('run-1:120363000000000001@g.us:0')).toBe(id);
  expect(whatsappMessageId('run-1:120363000000000001@g.us:1')).not.toBe(id);
  expect(whatsappMessageId('run-2:120363000000000001@g.us:0')).not.toBe(id);
});

test.each([
  ['120363041234567890@g.us', '120363041234567890@g.us'],
  ['60123456789', '60123456789@s.whatsapp.net'],
  ['+60123456789', '60123456789@s.whatsapp.net'],
  ['60123456789@s.whatsapp.net', '60123456789@s.whatsapp.net'],
  ['60123456789-1600000000', '60123456789-1600000000@g.us'],
  ['chat-1', null],
  ['0123456789', null],
  ['x@evil.example', null],
])('chat id %s → %s', (chatId, jid) => {
  expect(chatJid(chatId)).toBe(jid);
});
