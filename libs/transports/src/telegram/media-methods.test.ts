import { FILE_KINDS, fileRef, MAX_PHOTO_BYTES, parseFileRef, sentFile, uploadKind } from './media-methods.js';
import { multipartBody } from './multipart.js';

describe('uploadKind', () => {
  test.each<[string, number | null, string]>([
    ['image/png', 1_000, 'photo'],
    ['image/jpeg', MAX_PHOTO_BYTES, 'photo'],
    ['IMAGE/WEBP; q=1', 5_000, 'photo'],
    // sendPhoto refuses a photo over 10 MB: it goes as a file
    ['image/jpeg', MAX_PHOTO_BYTES + 1, 'document'],
    // formats sendPhoto cannot read
    ['image/heic', 1_000, 'document'],
    ['image/svg+xml', 1_000, 'document'],
    ['image/bmp', 1_000, 'document'],
    ['image/tiff', 1_000, 'document'],
    ['image/gif', 1_000, 'animation'],
    ['video/mp4', 1_000, 'video'],
    ['application/pdf', 1_000, 'document'],
    ['audio/mpeg', 1_000, 'document'],
  ])('%s of %s bytes → %s', (contentType, size, kind) => {
    expect(uploadKind(contentType, size)).toBe(kind);
  });

  test('each kind has its own method and field', () => {
    expect(Object.entries(FILE_KINDS).map(([kind, m]) => [kind, m.method, m.field])).toEqual([
      ['photo', 'sendPhoto', 'photo'],
      ['video', 'sendVideo', 'video'],
      ['animation', 'sendAnimation', 'animation'],
      ['audio', 'sendAudio', 'audio'],
      ['voice', 'sendVoice', 'voice'],
      ['document', 'sendDocument', 'document'],
    ]);
  });
});

describe('sentFile', () => {
  test('a photo: the largest size, listed last', () => {
    expect(sentFile({ message_id: 1, photo: [{ file_id: 'small' }, { file_id: 'large' }] })).toEqual({ kind: 'photo', fileId: 'large' });
  });
  test.each(['video', 'animation', 'document', 'audio', 'voice'])('a %s', (kind) => {
    expect(sentFile({ message_id: 1, [kind]: { file_id: `id-${kind}` } })).toEqual({ kind, fileId: `id-${kind}` });
  });
  test('an animation, which Telegram also lists as a document, is an animation', () => {
    expect(sentFile({ message_id: 1, document: { file_id: 'x' }, animation: { file_id: 'x' } })).toEqual({ kind: 'animation', fileId: 'x' });
  });
  test('a text message has none', () => {
    expect(sentFile({ message_id: 1, text: 'hi' })).toBeNull();
  });
});

describe('fileRef', () => {
  test('the kind travels with the file_id', () => {
    expect(fileRef('animation', 'CgACAgQAAx')).toBe('animation:CgACAgQAAx');
    expect(parseFileRef('animation:CgACAgQAAx', 'video/mp4')).toEqual({ kind: 'animation', fileId: 'CgACAgQAAx' });
  });
  test('a bare file_id (kept before kinds were) is sent as its content type uploads', () => {
    expect(parseFileRef('AgACAgQAAx', 'image/png')).toEqual({ kind: 'photo', fileId: 'AgACAgQAAx' });
    expect(parseFileRef('BAACAgQAAx', 'video/mp4')).toEqual({ kind: 'video', fileId: 'BAACAgQAAx' });
    expect(parseFileRef('sticker:x', 'image/webp')).toEqual({ kind: 'photo', fileId: 'sticker:x' });
  });
});

describe('multipartBody', () => {
  test('fields and a file, framed by the boundary', () => {
    const body = multipartBody(
      [
        { name: 'chat_id', value: '-100' },
        { name: 'photo', filename: 'a "b".png', contentType: 'image/png', bytes: Buffer.from([0, 1, 2]) },
      ],
      'XYZ',
    );
    expect(body.contentType).toBe('multipart/form-data; boundary=XYZ');
    expect(body.bytes).toEqual(
      Buffer.concat([
        Buffer.from('--XYZ\r\nContent-Disposition: form-data; name="chat_id"\r\n\r\n-100\r\n'),
        Buffer.from('--XYZ\r\nContent-Disposition: form-data; name="photo"; filename="a %22b%22.png"\r\nContent-Type: image/png\r\n\r\n'),
        Buffer.from([0, 1, 2]),
        Buffer.from('\r\n--XYZ--\r\n'),
      ]),
    );
  });
});
