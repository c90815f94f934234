import { TEXT_TOO_LONG, textOverLimit } from './text-limits.js';

const limits = { text: 4_096, caption: 1_024 };

describe('textOverLimit', () => {
  test('texts and captions up to the limits pass', () => {
    expect(textOverLimit([{ type: 'text', text: 'a'.repeat(4_096) }, { type: 'media', caption: 'b'.repeat(1_024) }, { type: 'media' }], limits)).toBeNull();
  });

  test('one code unit over fails with the part, its length and the limit', () => {
    expect(
      textOverLimit(
        [
          { type: 'text', text: 'ok' },
          { type: 'text', text: 'a'.repeat(4_097) },
        ],
        limits,
        2,
      ),
    ).toEqual({
      kind: 'rejected',
      code: TEXT_TOO_LONG,
      message: 'part 3: the text for this chat is 4097 characters (UTF-16 code units) once rendered; the platform takes at most 4096',
    });
    expect(textOverLimit([{ type: 'media', caption: 'c'.repeat(1_025) }], limits)).toMatchObject({
      message: expect.stringMatching(/^part 0: the caption .* 1025 .* at most 1024$/) as string,
    });
  });

  test('counted in UTF-16 code units, as Telegram counts: an emoji outside the BMP is 2', () => {
    const emoji = '\u{1F600}';
    expect(textOverLimit([{ type: 'text', text: emoji.repeat(2_048) }], limits)).toBeNull();
    expect(textOverLimit([{ type: 'text', text: `${emoji.repeat(2_048)}x` }], limits)?.code).toBe(TEXT_TOO_LONG);
    // 1,024 code points, but 2,048 code units
    expect(textOverLimit([{ type: 'media', caption: emoji.repeat(1_024) }], limits)?.code).toBe(TEXT_TOO_LONG);
  });
});
