import type { GroupMetadata } from '@whiskeysockets/baileys';
import { directChatId, groupEntry, isOwn, ownIds } from './directory-entries.js';

const own = ownIds({ id: '60123456789:3@s.whatsapp.net', lid: '123456789012345:3@lid' });
const meta = (participants: GroupMetadata['participants'], announce = true) =>
  ({ id: '1203630001@g.us', subject: 'G', participants, announce }) as GroupMetadata;

test('the account is recognised by its phone-number JID or its LID, device ignored', () => {
  expect(isOwn({ id: '123456789012345@lid' }, own)).toBe(true);
  expect(isOwn({ id: '99@lid', phoneNumber: '60123456789@s.whatsapp.net' }, own)).toBe(true);
  expect(isOwn('60123456789@s.whatsapp.net', own)).toBe(true);
  expect(isOwn({ id: '60999999999@s.whatsapp.net' }, own)).toBe(false);
});

test('announce mode: an admin in either form may post, a plain member may not', () => {
  expect(groupEntry(meta([{ id: '123456789012345@lid', admin: 'admin' }]), own).chat).toMatchObject({ canSend: true, memberCount: 1 });
  expect(groupEntry(meta([{ id: '60123456789@s.whatsapp.net', admin: 'superadmin' }]), own).chat.canSend).toBe(true);
  expect(groupEntry(meta([{ id: '123456789012345@lid', admin: null }]), own).chat).toMatchObject({ canSend: false, cannotSendReason: 'announce_only' });
  expect(groupEntry(meta([{ id: '123456789012345@lid', admin: null }], false), own).chat.canSend).toBe(true);
});

test("a one-to-one chat's id prefers the phone-number JID", () => {
  expect(directChatId('123@lid', '60111:2@s.whatsapp.net')).toBe('60111@s.whatsapp.net');
  expect(directChatId('123:4@lid')).toBe('123@lid');
  expect(directChatId('1203630001@g.us')).toBeNull();
});
