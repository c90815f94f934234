import { defaultTyping, MEDIA_TYPING_MS, typingMs } from './typing.js';

const typing = { charsPerSecond: 20, maxSeconds: 5 };

test('typing lasts the text at charsPerSecond, capped at maxSeconds', () => {
  expect(typingMs(typing, { type: 'text', text: 'x'.repeat(30) })).toBe(1_500);
  expect(typingMs(typing, { type: 'text', text: 'x'.repeat(1000) })).toBe(5_000);
  // characters as a person sees them: one emoji is one character
  expect(typingMs(typing, { type: 'text', text: '👍'.repeat(20) })).toBe(1_000);
});

test('a caption counts its text; a media without one a short fixed time, within the cap', () => {
  expect(typingMs(typing, { type: 'media', caption: 'x'.repeat(10) })).toBe(500);
  expect(typingMs(typing, { type: 'media' })).toBe(MEDIA_TYPING_MS);
  expect(typingMs({ charsPerSecond: 20, maxSeconds: 1 }, { type: 'media' })).toBe(1_000);
});

test('only WhatsApp accounts type by default', () => {
  expect(defaultTyping('whatsapp')).toEqual({ charsPerSecond: 20, maxSeconds: 5 });
  expect(defaultTyping('telegram')).toBeNull();
  expect(defaultTyping('http')).toBeNull();
});
