import { mediaMethod, sentFileId } from './media-methods.js';
import { multipartBody } from './multipart.js';

describe('mediaMethod', () => {
  test.each([
    ['image/png', 'sendPhoto', 'photo'],
    ['image/jpeg', 'sendPhoto', 'photo'],
    ['IMAGE/WEBP; q=1', 'sendPhoto', 'photo'],
    ['image/gif', 'sendDocument', 'document'],
    ['video/mp4', 'sendVideo', 'video'],
    ['application/pdf', 'sendDocument', 'document'],
    ['audio/mpeg', 'sendDocument', 'document'],
  ])('%s → %s', (contentType, method, field) => {
    expect(mediaMethod(contentType)).toEqual({ method, field });
  });
});

describe('sentFileId', () => {
  test('a photo: the largest size, listed last', () => {
    expect(sentFileId({ message_id: 1, photo: [{ file_id: 'small' }, { file_id: 'large' }] })).toBe('large');
  });
  test.each(['video', 'animation', 'document'])('a %s', (kind) => {
    expect(sentFileId({ message_id: 1, [kind]: { file_id: `id-${kind}` } })).toBe(`id-${kind}`);
  });
  test('a text message has none', () => {
    expect(sentFileId({ message_id: 1, text: 'hi' })).toBeNull();
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
