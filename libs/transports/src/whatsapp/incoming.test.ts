import type { WAMessage } from '@whiskeysockets/baileys';
import { incomingTexts } from './incoming.js';

const msg = (key: WAMessage['key'], message: WAMessage['message']): WAMessage => ({ key, message }) as WAMessage;

test('a one-to-one text is read under every spelling of its chat, from conversation or extendedTextMessage', () => {
  expect(incomingTexts([msg({ remoteJid: '60123456789@s.whatsapp.net', fromMe: false, id: 'A' }, { conversation: 'STOP' })])).toEqual([
    { chatIds: ['60123456789@s.whatsapp.net', '60123456789', '+60123456789'], text: 'STOP' },
  ]);
  expect(incomingTexts([msg({ remoteJid: '60123456789:4@s.whatsapp.net', id: 'B' }, { extendedTextMessage: { text: 'stop' } })])[0]!.chatIds[0]).toBe(
    '60123456789@s.whatsapp.net',
  );
  // wrapped in a disappearing message
  expect(incomingTexts([msg({ remoteJid: '60123456789@s.whatsapp.net', id: 'C' }, { ephemeralMessage: { message: { conversation: 'stop' } } })])).toHaveLength(
    1,
  );
});

test('a LID chat is read under its LID and the phone number WhatsApp gave beside it', () => {
  const [got] = incomingTexts([msg({ remoteJid: '123456789012345@lid', remoteJidAlt: '60123456789@s.whatsapp.net', id: 'D' }, { conversation: 'STOP' })]);
  expect(got!.chatIds).toEqual(['123456789012345@lid', '60123456789@s.whatsapp.net', '60123456789', '+60123456789']);
});

test("the account's own messages, groups, broadcasts and non-text messages are not read", () => {
  expect(
    incomingTexts([
      msg({ remoteJid: '60123456789@s.whatsapp.net', fromMe: true, id: 'E' }, { conversation: 'STOP' }),
      msg({ remoteJid: '120363000000000001@g.us', participant: '60123456789@s.whatsapp.net', id: 'F' }, { conversation: 'STOP' }),
      msg({ remoteJid: 'status@broadcast', id: 'G' }, { conversation: 'STOP' }),
      msg({ remoteJid: '60123456789@s.whatsapp.net', id: 'H' }, { imageMessage: { caption: 'STOP' } }),
    ]),
  ).toEqual([]);
});
