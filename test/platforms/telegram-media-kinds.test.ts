import { randomBytes } from 'node:crypto';
import type { MessagePart } from '@metronome/db';
import { MediaRefs } from '../../services/sender/src/media-refs.js';
import { driveRun } from '../helpers/sender-harness.js';
import { MAX_PHOTO_BYTES } from '../helpers/fake-telegram-files.js';
import { group, imageBytes, telegramFile, text } from '../helpers/telegram-file.js';

// What Telegram refuses and Metronome now avoids, through the real sender job (real PostgreSQL
// and Redis, manual clock) against the fake Bot API, which refuses as Telegram does: a file_id
// resent with another kind's method, a photo sendPhoto cannot take, and a text or caption
// longer than Telegram takes once rendered for a chat (docs/platforms.md, Telegram).

const ctx = telegramFile();

/** The error a target of the run stored. */
async function errorMessage(runId: string, chatId: string): Promise<string | null> {
  const row = await ctx.h.tdb.db
    .selectFrom('run_targets')
    .select('error_message')
    .where('run_id', '=', runId)
    .where('chat_id', '=', chatId)
    .executeTakeFirstOrThrow();
  return row.error_message;
}

/** Gives each chat of the run its variables, as the scheduler copies them from the campaign. */
async function setVars(runId: string, vars: Record<string, Record<string, string>>): Promise<void> {
  for (const [chat, v] of Object.entries(vars)) {
    await ctx.h.tdb.db
      .updateTable('run_targets')
      .set({ vars: JSON.stringify(v) })
      .where('run_id', '=', runId)
      .where('chat_id', '=', chat)
      .execute();
  }
}

describe('file kinds', () => {
  test('a video Telegram files as an animation: uploaded once by sendVideo, then sent by file_id with sendAnimation to the 99 other chats', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 4, maxSendPerMinute: 6_000 });
    // a short video without sound: Telegram files it as an animation (a GIF-like loop)
    ctx.fake.fileUploadsAs('video/mp4', 'animation');
    const mediaId = await ctx.h.seedMedia(bot.tenantId, randomBytes(4096), 'video/mp4');
    const chats = Array.from({ length: 100 }, (_, i) => group(1_000 + i));
    const runId = await ctx.seedRun(bot, chats, [{ type: 'media', mediaId, caption: 'loop' }]);
    await driveRun(ctx.h, runId);

    expect(ctx.fake.refusals({ token: bot.token })).toEqual([]);
    expect((await ctx.h.run(runId)).status).toBe('success');
    const all = ctx.fake.messages({ token: bot.token });
    const uploads = all.filter((m) => m.upload);
    expect(uploads.map((m) => [m.method, m.kind])).toEqual([['sendVideo', 'animation']]);
    const reuses = all.filter((m) => !m.upload);
    expect(reuses).toHaveLength(99);
    expect(new Set(reuses.map((m) => `${m.method} ${m.fileId}`))).toEqual(new Set([`sendAnimation ${uploads[0]!.fileId}`]));
    expect(new Set(all.map((m) => m.chatId)).size).toBe(100);
    // the kind is kept with the file_id, for every later run and replica
    const stored = await ctx.h.tdb.db.selectFrom('media_uploads').select('ref').where('account_id', '=', bot.accountId).executeTakeFirstOrThrow();
    expect(stored.ref).toBe(`animation:${uploads[0]!.fileId}`);
  });

  test('a file_id kept without its kind (before kinds were) that Telegram refuses for its kind is forgotten and the media uploaded again', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 1 });
    ctx.fake.fileUploadsAs('video/mp4', 'animation');
    const mediaId = await ctx.h.seedMedia(bot.tenantId, randomBytes(1024), 'video/mp4');
    await driveRun(ctx.h, await ctx.seedRun(bot, [group(1_200)], [{ type: 'media', mediaId }]));
    const first = ctx.fake.messages({ token: bot.token })[0]!;
    // as the row was written before kinds were kept: the bare file_id
    await ctx.h.tdb.db.updateTable('media_uploads').set({ ref: first.fileId! }).where('account_id', '=', bot.accountId).execute();
    // a replica started since: nothing in memory, only PostgreSQL
    const before = ctx.h.deps.media;
    ctx.h.deps.media = new MediaRefs(ctx.h.deps.repo);
    const second = await ctx.seedRun(bot, [group(1_201), group(1_202)], [{ type: 'media', mediaId }]);
    try {
      await driveRun(ctx.h, second);
    } finally {
      ctx.h.deps.media = before;
    }
    expect((await ctx.h.run(second)).status).toBe('success');
    expect(ctx.fake.refusals({ token: bot.token }).map((r) => [r.method, r.description])).toEqual([
      ['sendVideo', "Bad Request: can't use file of type Animation as Video"],
    ]);
    expect(ctx.fake.messages({ token: bot.token }).map((m) => [m.method, m.upload])).toEqual([
      ['sendVideo', true],
      ['sendVideo', true],
      ['sendAnimation', false],
    ]);
  });
});

describe('photos', () => {
  test('images sendPhoto cannot take go as documents (HEIC, SVG, BMP, TIFF, a PNG over 10 MB); JPEG, PNG and WebP as photos', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 2, maxSendPerMinute: 6_000 });
    const seeded: [string, Buffer, string][] = [
      ['heic', imageBytes('heic', 2048), 'image/heic'],
      ['svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'), 'image/svg+xml'],
      ['bmp', Buffer.concat([Buffer.from('BM'), randomBytes(1024)]), 'image/bmp'],
      ['tiff', Buffer.concat([Buffer.from('II*\0'), randomBytes(1024)]), 'image/tiff'],
      ['big png', imageBytes('png', MAX_PHOTO_BYTES + 1), 'image/png'],
      ['jpeg', imageBytes('jpeg', 1024), 'image/jpeg'],
      ['png', imageBytes('png', MAX_PHOTO_BYTES), 'image/png'],
      ['webp', imageBytes('webp', 1024), 'image/webp'],
    ];
    const parts: MessagePart[] = [];
    for (const [, bytes, type] of seeded) parts.push({ type: 'media', mediaId: await ctx.h.seedMedia(bot.tenantId, bytes, type) });
    const chats = [group(1_300), group(1_301)];
    const runId = await ctx.seedRun(bot, chats, parts);
    await driveRun(ctx.h, runId);

    expect(ctx.fake.refusals({ token: bot.token })).toEqual([]);
    expect((await ctx.h.run(runId)).status).toBe('success');
    const expected = ['sendDocument', 'sendDocument', 'sendDocument', 'sendDocument', 'sendDocument', 'sendPhoto', 'sendPhoto', 'sendPhoto'];
    // the first chat uploads each, the second sends each by its file_id with the same method
    for (const chat of chats) expect(ctx.fake.messages({ token: bot.token, chatId: chat }).map((m) => m.method)).toEqual(expected);
    expect(ctx.fake.uploads(bot.token)).toBe(seeded.length);
  });
  test('a photo whose sides Telegram refuses (PHOTO_INVALID_DIMENSIONS) goes again at once as a document, then by its file_id', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 1 });
    // a banner 21 times as wide as it is high: sendPhoto takes a ratio of at most 20
    const mediaId = await ctx.h.seedMedia(bot.tenantId, imageBytes('png', 4096, { width: 2100, height: 100 }), 'image/png');
    const chats = [group(1_310), group(1_311)];
    const runId = await ctx.seedRun(bot, chats, [{ type: 'media', mediaId, caption: 'wide' }]);
    await driveRun(ctx.h, runId);

    expect((await ctx.h.run(runId)).status).toBe('success');
    expect(ctx.fake.refusals({ token: bot.token }).map((r) => [r.chatId, r.method, r.description])).toEqual([
      [chats[0], 'sendPhoto', 'Bad Request: PHOTO_INVALID_DIMENSIONS'],
    ]);
    expect(ctx.fake.messages({ token: bot.token }).map((m) => [m.chatId, m.method, m.upload, m.caption])).toEqual([
      [chats[0], 'sendDocument', true, 'wide'],
      [chats[1], 'sendDocument', false, 'wide'],
    ]);
    // one request refused before anything was posted, one delivered: a single attempt
    expect((await ctx.h.targets(runId)).map((t) => [t.status, t.attempts])).toEqual([
      ['sent', 1],
      ['sent', 1],
    ]);
  });
});

describe('lengths, counted on what each chat receives', () => {
  test('a text that renders past 4,096 for one chat fails that chat alone, before any of its parts is sent', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 2 });
    const [short, long, emoji, overEmoji] = [group(1_400), group(1_401), group(1_402), group(1_403)];
    const runId = await ctx.seedRun(bot, [short, long, emoji, overEmoji], [text('Dear {{name}}'), text('{{bio}}')]);
    const smile = '\u{1F600}';
    await setVars(runId, {
      [short]: { name: 'Ann', bio: 'b'.repeat(1_000) },
      [long]: { name: 'Bo', bio: 'b'.repeat(4_097) },
      // 2,048 emoji are 4,096 UTF-16 code units, as Telegram counts: taken; one more is not
      [emoji]: { name: 'Cy', bio: smile.repeat(2_048) },
      [overEmoji]: { name: 'Di', bio: `${smile.repeat(2_048)}!` },
    });
    await driveRun(ctx.h, runId);

    const targets = new Map((await ctx.h.targets(runId)).map((t) => [t.chat_id, t]));
    expect(targets.get(short)).toMatchObject({ status: 'sent', parts_sent: 2 });
    expect(targets.get(emoji)).toMatchObject({ status: 'sent', parts_sent: 2 });
    for (const chat of [long, overEmoji]) {
      expect(targets.get(chat)).toMatchObject({ status: 'failed', parts_sent: 0, error_code: 'text_too_long' });
      expect(ctx.fake.messages({ token: bot.token, chatId: chat })).toEqual([]);
    }
    expect(await errorMessage(runId, long)).toBe(
      'part 1: the text for this chat is 4097 characters (UTF-16 code units) once rendered; the platform takes at most 4096',
    );
    expect(ctx.fake.messages({ token: bot.token, chatId: emoji })[1]!.text).toBe(smile.repeat(2_048));
    expect(ctx.fake.refusals({ token: bot.token })).toEqual([]);
  });

  test('a caption that renders past 1,024 for one chat fails that chat alone', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 1 });
    const mediaId = await ctx.h.seedMedia(bot.tenantId, imageBytes('jpeg', 512), 'image/jpeg');
    const [fits, over] = [group(1_500), group(1_501)];
    const runId = await ctx.seedRun(bot, [fits, over], [{ type: 'media', mediaId, caption: '{Hi|Hello} {{note}}' }]);
    await setVars(runId, { [fits]: { note: 'n'.repeat(1_000) }, [over]: { note: 'n'.repeat(1_022) } });
    await driveRun(ctx.h, runId);

    const targets = new Map((await ctx.h.targets(runId)).map((t) => [t.chat_id, t]));
    expect(targets.get(fits)).toMatchObject({ status: 'sent' });
    expect(targets.get(over)).toMatchObject({ status: 'failed', parts_sent: 0, error_code: 'text_too_long' });
    expect(await errorMessage(runId, over)).toMatch(/^part 0: the caption for this chat is (1025|1028) characters/);
    expect(ctx.fake.messages({ token: bot.token }).map((m) => m.chatId)).toEqual([fits]);
  });
});
