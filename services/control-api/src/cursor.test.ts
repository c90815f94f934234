import { ApiError } from './errors.js';
import { decodeChatCursor, decodePosition, encodeChatCursor, encodePosition, pageOf } from './cursor.js';

describe('cursors', () => {
  const position = { at: '2030-01-16T03:00:00.123456Z', id: '0b7f7b36-2a0b-4b8e-9d6f-6b1d7d1f0c11' };

  test('round-trip positions with microseconds, and chat ids with any characters', () => {
    expect(decodePosition(encodePosition(position))).toEqual(position);
    const chat = 'grüppe/?&= 1';
    expect(decodeChatCursor(encodeChatCursor(chat))).toBe(chat);
    expect(encodePosition(position)).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  test.each([
    ['not base64 JSON', 'bm9wZQ'],
    ['a chat cursor where a position is expected', encodeChatCursor('x')],
    ['a position without microseconds', Buffer.from(JSON.stringify({ at: '2030-01-16T03:00:00Z', id: position.id })).toString('base64url')],
    ['SQL in the id', Buffer.from(JSON.stringify({ at: position.at, id: "x' or 1=1" })).toString('base64url')],
  ])('%s is a 400 naming `cursor`', (_, cursor) => {
    try {
      decodePosition(cursor);
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).details).toEqual([{ field: 'cursor', message: expect.any(String) }]);
    }
  });

  test('pageOf uses the extra row only to know there is a next page', () => {
    expect(pageOf([1, 2, 3], 2, String)).toEqual({ rows: [1, 2], nextCursor: '2' });
    expect(pageOf([1, 2], 2, String)).toEqual({ rows: [1, 2], nextCursor: null });
    expect(pageOf([], 2, String)).toEqual({ rows: [], nextCursor: null });
  });
});
