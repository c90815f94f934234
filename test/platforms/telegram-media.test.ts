import { randomBytes } from 'node:crypto';
import { MediaRefs } from '../../services/sender/src/media-refs.js';
import { driveRun } from '../helpers/sender-harness.js';
import { expectNoTokenLeaked, group, imageBytes, telegramFile, text } from '../helpers/telegram-file.js';
import { eventually } from '../helpers/test-env.js';

// Telegram media through the real sender job against a fake of the Bot API (real PostgreSQL
// and Redis, manual clock): each file uploaded once, then sent by its file_id (the chats,
// waits and errors are in telegram.test.ts).

const ctx = telegramFile();

describe('messages and media', () => {
  test('multi-part messages reach many chats exactly once and in order: text by sendMessage, a photo uploaded once then by file_id', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 4 });
    const mediaId = await ctx.h.seedMedia(bot.tenantId, imageBytes('jpeg', 2048), 'image/jpeg');
    const chats = Array.from({ length: 8 }, (_, i) => group(i));
    const runId = await ctx.seedRun(bot, chats, [text('Good morning'), { type: 'media', mediaId, caption: 'today' }, text('Bye')]);
    await driveRun(ctx.h, runId);
    expect((await ctx.h.run(runId)).status).toBe('success');

    const all = ctx.fake.messages({ token: bot.token });
    const uploads = all.filter((m) => m.upload);
    expect(uploads).toHaveLength(1);
    const fileId = uploads[0]!.fileId;
    for (const chat of chats) {
      const mine = ctx.fake.messages({ token: bot.token, chatId: chat });
      expect(mine.map((m) => [m.method, m.text ?? m.caption])).toEqual([
        ['sendMessage', 'Good morning'],
        ['sendPhoto', 'today'],
        ['sendMessage', 'Bye'],
      ]);
      expect(mine[1]!.fileId).toBe(fileId);
    }
    // the message ids Telegram gave are what the run recorded
    const rows = await ctx.h.tdb.db.selectFrom('run_targets').select(['chat_id', 'message_ids']).where('run_id', '=', runId).execute();
    for (const row of rows) expect(row.message_ids).toEqual(ctx.fake.messages({ token: bot.token, chatId: row.chat_id }).map((m) => String(m.messageId)));
  });

  test('video by sendVideo, a GIF by sendAnimation, other files by sendDocument, each uploaded once', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 2 });
    const video = await ctx.h.seedMedia(bot.tenantId, randomBytes(512), 'video/mp4');
    const pdf = await ctx.h.seedMedia(bot.tenantId, randomBytes(512), 'application/pdf');
    const gif = await ctx.h.seedMedia(bot.tenantId, randomBytes(512), 'image/gif');
    const chats = [group(20), group(21), group(22)];
    const runId = await ctx.seedRun(bot, chats, [
      { type: 'media', mediaId: video },
      { type: 'media', mediaId: pdf, caption: 'the report' },
      { type: 'media', mediaId: gif },
    ]);
    await driveRun(ctx.h, runId);
    expect((await ctx.h.run(runId)).status).toBe('success');
    for (const chat of chats) {
      expect(ctx.fake.messages({ token: bot.token, chatId: chat }).map((m) => m.method)).toEqual(['sendVideo', 'sendDocument', 'sendAnimation']);
    }
    expect(ctx.fake.uploads(bot.token)).toBe(3);
  });

  test('a second run reuses the file_id kept in PostgreSQL: zero uploads, even on a fresh replica', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 3 });
    const mediaId = await ctx.h.seedMedia(bot.tenantId, imageBytes('png', 1024), 'image/png');
    const chats = Array.from({ length: 5 }, (_, i) => group(40 + i));
    const first = await ctx.seedRun(bot, chats, [{ type: 'media', mediaId, caption: 'one' }]);
    await driveRun(ctx.h, first);
    expect(ctx.fake.uploads(bot.token)).toBe(1);
    const stored = await ctx.h.tdb.db.selectFrom('media_uploads').selectAll().where('account_id', '=', bot.accountId).executeTakeFirstOrThrow();
    const fileId = ctx.fake.messages({ token: bot.token }).find((m) => m.upload)!.fileId;
    // the file_id with the kind Telegram filed it under
    expect(stored.ref).toBe(`photo:${fileId}`);
    // Telegram file_ids do not expire: the reference is kept far beyond a run
    expect(stored.expires_at.getTime() - ctx.h.clock.now()).toBeGreaterThan(300 * 24 * 3_600_000);

    // another replica (or this one restarted): nothing in memory, only PostgreSQL
    const before = ctx.h.deps.media;
    ctx.h.deps.media = new MediaRefs(ctx.h.deps.repo);
    try {
      const second = await ctx.seedRun(bot, chats, [{ type: 'media', mediaId, caption: 'two' }]);
      await driveRun(ctx.h, second);
      expect((await ctx.h.run(second)).status).toBe('success');
    } finally {
      ctx.h.deps.media = before;
    }
    expect(ctx.fake.uploads(bot.token)).toBe(1);
    for (const chat of chats)
      expect(ctx.fake.messages({ token: bot.token, chatId: chat }).map((m) => [m.caption, m.fileId])).toEqual([
        ['one', fileId],
        ['two', fileId],
      ]);
  });

  test('parallel lanes wait for the first upload, then send by its file_id', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 3 });
    const mediaId = await ctx.h.seedMedia(bot.tenantId, imageBytes('png', 4096), 'image/png');
    const chats = [group(60), group(61), group(62)];
    const runId = await ctx.seedRun(bot, chats, [{ type: 'media', mediaId }]);
    ctx.fake.holdUploads();
    const job = ctx.h.runJob(runId);
    try {
      // one lane's upload is on the wire, the two others wait for it
      await eventually(
        'one upload held and two lanes waiting',
        async () => ctx.fake.heldUploads() === 1 && ctx.h.deps.media.waiting(bot.accountId, mediaId) === 2,
        10_000,
        10,
      );
      expect(ctx.fake.messages({ token: bot.token })).toHaveLength(0);
    } finally {
      ctx.fake.releaseUploads();
    }
    await job;
    await driveRun(ctx.h, runId);
    expect((await ctx.h.run(runId)).status).toBe('success');
    const all = ctx.fake.messages({ token: bot.token });
    expect(all.map((m) => m.chatId).sort()).toEqual([...chats].sort());
    expect(all.filter((m) => m.upload)).toHaveLength(1);
    expect(new Set(all.map((m) => m.fileId)).size).toBe(1);
  });

  test('lanes released together by an upload still go out at the account pace', async () => {
    // 60 a minute: one send a second. The upload takes 5 s (held while the clock moves on);
    // the two lanes waiting for it take their pace slots only after it, so they go out one
    // interval apart, not back to back on slots reserved before the wait.
    const bot = await ctx.seedBot({ groupConcurrency: 3, maxSendPerMinute: 60 });
    const mediaId = await ctx.h.seedMedia(bot.tenantId, imageBytes('png', 4096), 'image/png');
    const chats = [group(80), group(81), group(82)];
    const runId = await ctx.seedRun(bot, chats, [{ type: 'media', mediaId }]);
    ctx.fake.holdUploads();
    const job = ctx.h.runJob(runId);
    let released = 0;
    try {
      await eventually(
        'one upload held and two lanes waiting',
        async () => ctx.fake.heldUploads() === 1 && ctx.h.deps.media.waiting(bot.accountId, mediaId) === 2,
        10_000,
        10,
      );
      ctx.h.clock.advance(5_000);
      released = ctx.h.clock.now();
    } finally {
      ctx.fake.releaseUploads();
    }
    await job;
    await driveRun(ctx.h, runId);
    expect((await ctx.h.run(runId)).status).toBe('success');
    const byRef = ctx.fake
      .messages({ token: bot.token })
      .filter((m) => !m.upload)
      .map((m) => m.receivedAt)
      .sort((a, b) => a - b);
    expect(byRef).toHaveLength(2);
    expect(byRef[0]).toBeGreaterThanOrEqual(released);
    expect(byRef[1]).toBeGreaterThanOrEqual(released + 1_000);
  });

  test('a file_id Telegram no longer accepts is forgotten and the media uploaded again, not failed', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 1 });
    const mediaId = await ctx.h.seedMedia(bot.tenantId, imageBytes('png', 1024), 'image/png');
    const first = await ctx.seedRun(bot, [group(90)], [{ type: 'media', mediaId }]);
    await driveRun(ctx.h, first);
    ctx.fake.forgetFiles(bot.token);
    const second = await ctx.seedRun(bot, [group(91), group(92)], [{ type: 'media', mediaId }]);
    await driveRun(ctx.h, second);
    expect((await ctx.h.run(second)).status).toBe('success');
    expect(ctx.fake.refusals({ token: bot.token }).map((r) => r.status)).toEqual([400]);
    // one upload per file_id's life: the first run's, then the one after it was refused
    expect(ctx.fake.messages({ token: bot.token }).filter((m) => m.upload)).toHaveLength(2);
    // the refusal counts no attempt: the part is sent again at once, uploading first
    expect((await ctx.h.targets(second)).map((t) => [t.status, t.attempts])).toEqual([
      ['sent', 1],
      ['sent', 1],
    ]);
  });

  test('when the uploading send fails, the next waiting lane uploads instead', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 3 });
    const mediaId = await ctx.h.seedMedia(bot.tenantId, imageBytes('png', 4096), 'image/png');
    const chats = [group(70), group(71), group(72)];
    const runId = await ctx.seedRun(bot, chats, [{ type: 'media', mediaId }]);
    ctx.fake.holdUploads();
    ctx.fake.failNext(bot.token, 1, 502);
    const job = ctx.h.runJob(runId);
    try {
      await eventually(
        'one upload held and two lanes waiting',
        async () => ctx.fake.heldUploads() === 1 && ctx.h.deps.media.waiting(bot.accountId, mediaId) === 2,
        10_000,
        10,
      );
    } finally {
      ctx.fake.releaseUploads();
    }
    await job;
    await driveRun(ctx.h, runId);
    const refused = ctx.fake.refusals({ token: bot.token });
    expect(refused.map((r) => r.status)).toEqual([502]);
    // the other two chats got it, one of them uploading, the other by that file_id
    const all = ctx.fake.messages({ token: bot.token });
    expect(all.map((m) => m.chatId).sort()).toEqual(chats.filter((c) => c !== refused[0]!.chatId).sort());
    expect(all.filter((m) => m.upload)).toHaveLength(1);
    // a 502 to the whole upload may have posted it: unknown, never re-sent on its own
    const failed = (await ctx.h.targets(runId)).find((t) => t.chat_id === refused[0]!.chatId)!;
    expect(failed).toMatchObject({ status: 'unknown', attempts: 1, error_code: 'http_502' });
  });
});

// Last (describe blocks run in order): every upload above logged through the file's logger at trace level.
describe('secrets', () => {
  test('no bot token, nor its secret part, appears in any log line or stored error of an upload', async () => {
    // the failed upload's retry was logged, with Telegram's answer
    await expectNoTokenLeaked(ctx, ['http_502']);
  });
});
