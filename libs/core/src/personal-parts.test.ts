import { compileParts, personalPart } from './message-template.js';

// The sender renders each chat's parts by the same rules the API checked them by (libs/core
// message-template.ts): a fallback for a chat without the variable, its value for one with it.

const key = { runId: '3f1c2a5e-0000-4000-8000-000000000001', chatId: 'g-1', partIndex: 0 };

test('a text and a caption with fallbacks, as a chat without the variable and one with it receive them', () => {
  const parts = [
    { type: 'text' as const, text: 'Hello {{name|friends}}' },
    { type: 'media' as const, mediaId: 'm', caption: 'For {{ name | you }}' },
  ];
  const [text, caption] = compileParts(parts);
  const media = { type: 'media' as const, mediaRef: 'r', caption: 'For {{ name | you }}' };
  expect(personalPart({ type: 'text', text: 'Hello {{name|friends}}' }, text ?? null, key, null)).toEqual({ type: 'text', text: 'Hello friends' });
  expect(personalPart({ type: 'text', text: 'Hello {{name|friends}}' }, text ?? null, key, { name: 'Ann' })).toEqual({ type: 'text', text: 'Hello Ann' });
  expect(personalPart(media as never, caption ?? null, { ...key, partIndex: 1 }, null)).toMatchObject({ caption: 'For you' });
});
