import { chatKey } from './chat-key.js';
import { telegramAddressOf, telegramUsernameOf } from './telegram-peer.js';

// What telegram_user chat ids are compared by: Telegram reads usernames in any case.

test('a telegram_user username, with or without the @, in any case, is one key; marked ids stay as they are', () => {
  for (const typed of ['@Friend_One', 'Friend_One', '@FRIEND_ONE', 'friend_one']) expect(chatKey('telegram_user', typed)).toBe('@friend_one');
  for (const id of ['555', '-42', '-100123', '@abc', '@1abcd', `@a${'b'.repeat(32)}`, '@Kelvin_\u212a']) expect(chatKey('telegram_user', id)).toBe(id);
});

test('other platforms compare chat ids as they are', () => {
  for (const platform of ['whatsapp', 'telegram', 'http']) {
    expect(chatKey(platform, '@Friend_One')).toBe('@Friend_One');
    expect(chatKey(platform, '60123@s.whatsapp.net')).toBe('60123@s.whatsapp.net');
  }
});

test('the username a chat id names is what a send resolves', () => {
  expect(telegramUsernameOf('@Friend_One')).toBe('friend_one');
  expect(telegramUsernameOf('555')).toBeNull();
  expect(telegramAddressOf('@Friend_One')).toEqual({ kind: 'username', username: 'friend_one' });
  expect(telegramAddressOf('@Kelvin_\u212a')).toBeNull();
});
