import { randomBytes } from 'node:crypto';
import { FakeTelegramBotApi } from '../helpers/fake-telegram-bot-api.js';
import { imageBytes, MAX_PHOTO_BYTES } from '../helpers/fake-telegram-files.js';

// The fake Bot API refuses what Telegram refuses, with Telegram's own descriptions (where each
// was found: docs/platforms.md, Telegram, "What each answer means for a run"). The transport's
// tests trust these answers, so they are pinned here, request by request.

let fake: FakeTelegramBotApi;
const token = `900001:${randomBytes(24).toString('base64url')}`;
const chat = '-1009000001';

beforeAll(async () => {
  fake = await FakeTelegramBotApi.start();
  fake.addBot(token);
});
afterAll(async () => {
  await fake?.close();
});

async function call(method: string, body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${fake.url}/bot${token}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ chat_id: chat, ...body }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function upload(method: string, field: string, bytes: Buffer, contentType: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = new FormData();
  form.set('chat_id', chat);
  form.set(field, new Blob([bytes], { type: contentType }), 'file');
  const res = await fetch(`${fake.url}/bot${token}/${method}`, { method: 'POST', body: form });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const refusal = (description: string) => ({ status: 400, body: { ok: false, error_code: 400, description } });

test('a file_id is resent only with the method of the kind it was filed under', async () => {
  fake.fileUploadsAs('video/mp4', 'animation');
  const sent = await upload('sendVideo', 'video', randomBytes(256), 'video/mp4');
  const result = sent.body['result'] as Record<string, { file_id: string }>;
  // an animation, listed as a document too
  expect(
    Object.keys(result)
      .filter((k) => ['video', 'animation', 'document'].includes(k))
      .sort(),
  ).toEqual(['animation', 'document']);
  const fileId = result['animation']!.file_id;
  expect(await call('sendVideo', { video: fileId })).toEqual(refusal("Bad Request: can't use file of type Animation as Video"));
  expect(await call('sendDocument', { document: fileId })).toEqual(refusal("Bad Request: can't use file of type Animation as Document"));
  expect((await call('sendAnimation', { animation: fileId })).status).toBe(200);
  expect(await call('sendAnimation', { animation: 'no-such-file' })).toEqual(refusal('Bad Request: wrong file identifier/HTTP URL specified'));
});

test('sendPhoto takes a JPEG, PNG or WebP of at most 10 MB, of sides it accepts', async () => {
  for (const format of ['jpeg', 'png', 'webp'] as const)
    expect((await upload('sendPhoto', 'photo', imageBytes(format, 512), `image/${format}`)).status).toBe(200);
  expect((await upload('sendPhoto', 'photo', imageBytes('png', MAX_PHOTO_BYTES), 'image/png')).status).toBe(200);
  expect(await upload('sendPhoto', 'photo', imageBytes('heic', 512), 'image/heic')).toEqual(refusal('Bad Request: IMAGE_PROCESS_FAILED'));
  expect(await upload('sendPhoto', 'photo', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/svg+xml')).toEqual(
    refusal('Bad Request: IMAGE_PROCESS_FAILED'),
  );
  expect(await upload('sendPhoto', 'photo', imageBytes('png', MAX_PHOTO_BYTES + 1), 'image/png')).toEqual(
    refusal(`Bad Request: file of size ${MAX_PHOTO_BYTES + 1} bytes is too big for a photo; the maximum size is 10485760 bytes`),
  );
  // sides: at most 10,000 in total, one at most 20 times the other
  expect((await upload('sendPhoto', 'photo', imageBytes('png', 512, { width: 2000, height: 100 }), 'image/png')).status).toBe(200);
  expect(await upload('sendPhoto', 'photo', imageBytes('png', 512, { width: 2100, height: 100 }), 'image/png')).toEqual(
    refusal('Bad Request: PHOTO_INVALID_DIMENSIONS'),
  );
  expect(await upload('sendPhoto', 'photo', imageBytes('png', 512, { width: 5001, height: 5000 }), 'image/png')).toEqual(
    refusal('Bad Request: PHOTO_INVALID_DIMENSIONS'),
  );
  // as a document, any of them goes
  expect((await upload('sendDocument', 'document', imageBytes('heic', 512), 'image/heic')).status).toBe(200);
});

test('a text of at most 4,096 and a caption of at most 1,024 UTF-16 code units', async () => {
  const smile = '\u{1F600}';
  expect((await call('sendMessage', { text: smile.repeat(2_048) })).status).toBe(200);
  expect(await call('sendMessage', { text: `${smile.repeat(2_048)}!` })).toEqual(refusal('Bad Request: message is too long'));
  const photo = ((await upload('sendPhoto', 'photo', imageBytes('jpeg', 512), 'image/jpeg')).body['result'] as { photo: { file_id: string }[] }).photo.at(
    -1,
  )!.file_id;
  expect((await call('sendPhoto', { photo, caption: 'c'.repeat(1_024) })).status).toBe(200);
  expect(await call('sendPhoto', { photo, caption: smile.repeat(513) })).toEqual(refusal('Bad Request: message caption is too long'));
});
