import { T0, time, start, stop, call, send, sha, upload, put, get } from './app.fixture.js';

afterEach(() => stop());

describe('platform: media', () => {
  beforeEach(() => start());
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);

  it('stores an upload, counts it per account and sha256, and accepts its ref in a message', async () => {
    const first = await upload('acc', png);
    expect(first).toMatchObject({ status: 200, body: { mediaRef: expect.stringMatching(/^m-/) } });
    await upload('acc', png);
    const ref = first.body.mediaRef as string;
    expect((await get(`/sandbox/media/${ref}`)).body).toEqual({
      mediaRef: ref,
      sha256: sha(png),
      contentType: 'image/png',
      size: png.length,
      account: 'acc',
      uploadedAt: T0,
    });
    expect((await get('/sandbox/stats')).body.uploads).toEqual([{ account: 'acc', sha256: sha(png), count: 2 }]);
    const res = await send('acc', { chatId: 'c1', part: { type: 'media', mediaRef: ref, caption: 'see' }, partIndex: 0, partCount: 1 });
    expect(res.status).toBe(200);
  });

  it('keeps a JSON upload as raw bytes', async () => {
    const json = Buffer.from('{"a": 1}');
    expect((await upload('acc', json, 'application/json')).status).toBe(200);
  });

  it('answers 400 to a missing or wrong X-Media-Sha256 and 401 to an unauthorized account', async () => {
    expect(await upload('acc', png, 'image/png', null)).toMatchObject({ status: 400, body: { error: 'message_invalid' } });
    expect(await upload('acc', png, 'image/png', sha(Buffer.from('other')))).toMatchObject({ status: 400, body: { error: 'message_invalid' } });
    await put('/sandbox/accounts/acc', { unauthorized: true });
    expect(await upload('acc', png)).toMatchObject({ status: 401, body: { error: 'account_unauthorized' } });
    expect((await get('/sandbox/stats')).body.uploads).toEqual([]);
  });

  it('answers 400 to a body over 64 MiB', async () => {
    const huge = Buffer.alloc(64 * 1024 * 1024 + 1);
    expect(await upload('acc', huge)).toMatchObject({ status: 400, body: { error: 'message_invalid' } });
  });

  const mediaTo = (mediaRef: string) => ({ chatId: 'c1', part: { type: 'media', mediaRef }, partIndex: 0, partCount: 1 });

  it('answers 400 media_ref_invalid with a detail to a message naming an unknown, foreign or expired ref', async () => {
    const ref = (await upload('acc', png)).body.mediaRef as string;
    expect(await send('acc', mediaTo('m-nope'))).toMatchObject({ status: 400, body: { error: 'media_ref_invalid', detail: 'unknown mediaRef' } });
    expect(await send('other', mediaTo(ref))).toMatchObject({
      status: 400,
      body: { error: 'media_ref_invalid', detail: 'mediaRef belongs to another account' },
    });
    time.now += 24 * 3_600_000;
    expect(await send('acc', mediaTo(ref))).toMatchObject({ status: 400, body: { error: 'media_ref_invalid', detail: 'mediaRef expired' } });
    expect((await get('/sandbox/media/m-nope')).status).toBe(404);
    expect((await get('/sandbox/messages')).body.items).toEqual([]);
  });

  it('DELETE /sandbox/media forgets every ref, as a restarted platform would; a new upload works', async () => {
    const ref = (await upload('acc', png)).body.mediaRef as string;
    expect((await send('acc', mediaTo(ref))).status).toBe(200);
    expect(await call({ method: 'DELETE', url: '/sandbox/media' })).toMatchObject({ status: 200, body: { forgotten: 1 } });
    expect((await get(`/sandbox/media/${ref}`)).status).toBe(404);
    expect(await send('acc', mediaTo(ref))).toMatchObject({ status: 400, body: { error: 'media_ref_invalid' } });
    const again = (await upload('acc', png)).body.mediaRef as string;
    expect((await send('acc', mediaTo(again))).status).toBe(200);
    expect((await get('/sandbox/messages')).body.items).toHaveLength(2);
  });
});
