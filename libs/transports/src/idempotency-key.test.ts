import { validateHeaderValue } from 'node:http';
import fc from 'fast-check';
import { decodeIdempotencyKey, encodeIdempotencyKey } from './idempotency-key.js';

const RUN = '0b9f6c1e-5a3d-4f7e-9c2a-1d8e7f6a5b4c';

/** Any JS string of up to `max` UTF-16 units, lone surrogates included. */
const anyText = (max: number) => fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: max }).map((units) => String.fromCharCode(...units));

/** A chat id the API accepts: 1–256 characters, no control characters (C0, DEL, C1). */
const chatId = fc
  .array(
    fc.oneof(
      fc.integer({ min: 0x20, max: 0x7e }),
      fc.integer({ min: 0xa0, max: 0xffff }),
      // an astral character (emoji, rare CJK) as its surrogate pair
      fc.integer({ min: 0x10000, max: 0x10ffff }).map((cp) => -cp),
    ),
    { minLength: 1, maxLength: 256 },
  )
  .map((cps) =>
    cps
      .map((cp) => (cp < 0 ? String.fromCodePoint(-cp) : String.fromCharCode(cp)))
      .join('')
      .slice(0, 256),
  )
  .filter((s) => s.length > 0);

describe('Idempotency-Key encoding (CONTRACT §5)', () => {
  test('an ASCII key without spaces or % is sent as it is', () => {
    expect(encodeIdempotencyKey(`${RUN}:chat-1:0`)).toBe(`${RUN}:chat-1:0`);
    expect(encodeIdempotencyKey(`${RUN}:-1001234567890:2`)).toBe(`${RUN}:-1001234567890:2`);
  });

  test.each([
    ['Cyrillic', 'чат', '%D1%87%D0%B0%D1%82'],
    ['CJK', '群', '%E7%BE%A4'],
    ['emoji', '🎉', '%F0%9F%8E%89'],
    ['space', 'a b', 'a%20b'],
    ['percent', '100%', '100%25'],
    ['Latin-1', 'é', '%C3%A9'],
    ['lone surrogate', '\ud800', '%ED%A0%80'],
  ])('%s: percent-encoded UTF-8', (_name, chat, encoded) => {
    expect(encodeIdempotencyKey(`${RUN}:${chat}:0`)).toBe(`${RUN}:${encoded}:0`);
  });

  test('every accepted chat id gives a header value node sends, of visible ASCII, within 2,400 characters', () => {
    fc.assert(
      fc.property(chatId, fc.integer({ min: 0, max: 9 }), (chat, part) => {
        const value = encodeIdempotencyKey(`${RUN}:${chat}:${part}`);
        expect(() => validateHeaderValue('idempotency-key', value)).not.toThrow();
        expect(value).toMatch(/^[\x21-\x7e]+$/);
        expect(value.length).toBeLessThanOrEqual(2_400);
      }),
      { numRuns: 500 },
    );
  });

  test('the longest keys fit: 256 three-byte or astral characters', () => {
    for (const chat of ['群'.repeat(256), '🎉'.repeat(128), 'ж'.repeat(256)]) {
      const value = encodeIdempotencyKey(`${RUN}:${chat}:9`);
      expect(() => validateHeaderValue('idempotency-key', value)).not.toThrow();
      expect(value.length).toBeLessThanOrEqual(2_400);
    }
  });

  test('round trip: decoding gives back every key, lone surrogates included', () => {
    fc.assert(
      fc.property(anyText(300), (key) => {
        expect(decodeIdempotencyKey(encodeIdempotencyKey(key))).toBe(key);
      }),
      { numRuns: 1_000 },
    );
  });

  test('different keys never share a header value', () => {
    fc.assert(
      fc.property(anyText(20), anyText(20), (a, b) => {
        fc.pre(a !== b);
        expect(encodeIdempotencyKey(a)).not.toBe(encodeIdempotencyKey(b));
      }),
      { numRuns: 2_000 },
    );
    // the pairs an encoding without escaping % or space, or without WTF-8, would merge
    const tricky = ['a b', 'a%20b', 'a%2520b', 'a\u00a0b', '\ud800', '\udc00', '\ufffd', 'x:y:0', 'x%3Ay:0'];
    expect(new Set(tricky.map(encodeIdempotencyKey)).size).toBe(tricky.length);
  });

  test('decoding accepts only the one spelling the encoder writes', () => {
    for (const value of ['a%2', 'a%zz', 'a%e9', '%41', 'a b', 'é', '%C3', '%C0%80', '%F4%90%80%80', '%80']) {
      expect(decodeIdempotencyKey(value)).toBeNull();
    }
  });
});
