import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { MessagePart } from '@metronome/db';
import { createLogger } from '@metronome/observability';
import { TelegramTransport } from '@metronome/transports';
import { MediaRefs } from '../../services/sender/src/media-refs.js';
import type { FakeTelegramBotApi } from '../helpers/fake-telegram-bot-api.js';
import { driveRun, type SenderHarness } from '../helpers/sender-harness.js';
import { eventually } from '../helpers/test-env.js';
import { startTelegramHarness } from '../helpers/telegram-harness.js';

// The Telegram transport driven by the real sender job (real PostgreSQL and Redis, manual
// clock) against a fake of the Bot API: uploads, waits, migrations, chat and account errors.

const text = (t: string): MessagePart => ({ type: 'text', text: t });
/** supergroup ids are negative; a user's private chat id is positive */
const group = (i: number) => `-100${2_000_000 + i}`;
const user = (i: number) => String(3_000_000 + i);

let fake: FakeTelegramBotApi;
let h: SenderHarness;
/** every log line of the sender, to check no bot token ever reaches one */
const logLines: string[] = [];
let nextBot = 500_000;

beforeAll(async () => {
  ({ fake, h } = await startTelegramHarness({ chatPacePerMinute: { telegram: 20 }, maxRetries: 3 }));
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });
  h.deps.logger = createLogger('sender-test', 'trace', sink);
});
afterAll(async () => {
  await h?.close();
  await fake?.close();
});

const tokens: string[] = [];

async function seedBot(opts: { groupConcurrency?: number; maxSendPerMinute?: number } = {}) {
  const botId = String(nextBot++);
  const token = `${botId}:${randomBytes(24).toString('base64url')}`;
  tokens.push(token);
  fake.addBot(token);
  const a = await h.seedAccount({ ...opts, platform: 'telegram', externalId: botId, credentials: { botToken: token } });
  return { ...a, token };
}

async function seedRun(bot: { tenantId: string; accountId: string }, targets: string[], parts: MessagePart[]) {
  return h.seedRun({ tenantId: bot.tenantId, accountId: bot.accountId, targets, parts });
}

async function campaignTargets(runId: string): Promise<string[]> {
  const row = await h.tdb.db
    .selectFrom('runs as r')
    .innerJoin('campaigns as c', 'c.id', 'r.campaign_id')
    .select('c.targets')
    .where('r.id', '=', runId)
    .executeTakeFirstOrThrow();
  return row.targets;
}

describe('messages and media', () => {
  test('multi-part messages reach many chats exactly once and in order: text by sendMessage, a photo uploaded once then by file_id', async () => {
    const bot = await seedBot({ groupConcurrency: 4 });
    const mediaId = await h.seedMedia(bot.tenantId, randomBytes(2048), 'image/jpeg');
    const chats = Array.from({ length: 8 }, (_, i) => group(i));
    const runId = await seedRun(bot, chats, [text('Good morning'), { type: 'media', mediaId, caption: 'today' }, text('Bye')]);
    await driveRun(h, runId);
    expect((await h.run(runId)).status).toBe('success');

    const all = fake.messages({ token: bot.token });
    const uploads = all.filter((m) => m.upload);
    expect(uploads).toHaveLength(1);
    const fileId = uploads[0]!.fileId;
    for (const chat of chats) {
      const mine = fake.messages({ token: bot.token, chatId: chat });
      expect(mine.map((m) => [m.method, m.text ?? m.caption])).toEqual([
        ['sendMessage', 'Good morning'],
        ['sendPhoto', 'today'],
        ['sendMessage', 'Bye'],
      ]);
      expect(mine[1]!.fileId).toBe(fileId);
    }
    // the message ids Telegram gave are what the run recorded
    const rows = await h.tdb.db.selectFrom('run_targets').select(['chat_id', 'message_ids']).where('run_id', '=', runId).execute();
    for (const row of rows) expect(row.message_ids).toEqual(fake.messages({ token: bot.token, chatId: row.chat_id }).map((m) => String(m.messageId)));
  });

  test('video by sendVideo, other files by sendDocument (a GIF too), each uploaded once', async () => {
    const bot = await seedBot({ groupConcurrency: 2 });
    const video = await h.seedMedia(bot.tenantId, randomBytes(512), 'video/mp4');
    const pdf = await h.seedMedia(bot.tenantId, randomBytes(512), 'application/pdf');
    const gif = await h.seedMedia(bot.tenantId, randomBytes(512), 'image/gif');
    const chats = [group(20), group(21), group(22)];
    const runId = await seedRun(bot, chats, [
      { type: 'media', mediaId: video },
      { type: 'media', mediaId: pdf, caption: 'the report' },
      { type: 'media', mediaId: gif },
    ]);
    await driveRun(h, runId);
    expect((await h.run(runId)).status).toBe('success');
    for (const chat of chats) {
      expect(fake.messages({ token: bot.token, chatId: chat }).map((m) => m.method)).toEqual(['sendVideo', 'sendDocument', 'sendDocument']);
    }
    expect(fake.uploads(bot.token)).toBe(3);
  });

  test('a second run reuses the file_id kept in PostgreSQL: zero uploads, even on a fresh replica', async () => {
    const bot = await seedBot({ groupConcurrency: 3 });
    const mediaId = await h.seedMedia(bot.tenantId, randomBytes(1024), 'image/png');
    const chats = Array.from({ length: 5 }, (_, i) => group(40 + i));
    const first = await seedRun(bot, chats, [{ type: 'media', mediaId, caption: 'one' }]);
    await driveRun(h, first);
    expect(fake.uploads(bot.token)).toBe(1);
    const stored = await h.tdb.db.selectFrom('media_uploads').selectAll().where('account_id', '=', bot.accountId).executeTakeFirstOrThrow();
    expect(stored.ref).toBe(fake.messages({ token: bot.token }).find((m) => m.upload)!.fileId);
    // Telegram file_ids do not expire: the reference is kept far beyond a run
    expect(stored.expires_at.getTime() - h.clock.now()).toBeGreaterThan(300 * 24 * 3_600_000);

    // another replica (or this one restarted): nothing in memory, only PostgreSQL
    const before = h.deps.media;
    h.deps.media = new MediaRefs(h.deps.repo);
    try {
      const second = await seedRun(bot, chats, [{ type: 'media', mediaId, caption: 'two' }]);
      await driveRun(h, second);
      expect((await h.run(second)).status).toBe('success');
    } finally {
      h.deps.media = before;
    }
    expect(fake.uploads(bot.token)).toBe(1);
    for (const chat of chats) expect(fake.messages({ token: bot.token, chatId: chat }).map((m) => [m.caption, m.fileId])).toEqual([
      ['one', stored.ref],
      ['two', stored.ref],
    ]);
  });

  test('parallel lanes wait for the first upload, then send by its file_id', async () => {
    const bot = await seedBot({ groupConcurrency: 3 });
    const mediaId = await h.seedMedia(bot.tenantId, randomBytes(4096), 'image/png');
    const chats = [group(60), group(61), group(62)];
    const runId = await seedRun(bot, chats, [{ type: 'media', mediaId }]);
    fake.holdUploads();
    const job = h.runJob(runId);
    try {
      // one lane's upload is on the wire, the two others wait for it
      await eventually('one upload held and two lanes waiting', async () => fake.heldUploads() === 1 && h.deps.media.waiting(bot.accountId, mediaId) === 2, 10_000, 10);
      expect(fake.messages({ token: bot.token })).toHaveLength(0);
    } finally {
      fake.releaseUploads();
    }
    await job;
    await driveRun(h, runId);
    expect((await h.run(runId)).status).toBe('success');
    const all = fake.messages({ token: bot.token });
    expect(all.map((m) => m.chatId).sort()).toEqual([...chats].sort());
    expect(all.filter((m) => m.upload)).toHaveLength(1);
    expect(new Set(all.map((m) => m.fileId)).size).toBe(1);
  });

  test('lanes released together by an upload still go out at the account pace', async () => {
    // 60 a minute: one send a second. The upload takes 5 s (held while the clock moves on);
    // the two lanes waiting for it take their pace slots only after it, so they go out one
    // interval apart, not back to back on slots reserved before the wait.
    const bot = await seedBot({ groupConcurrency: 3, maxSendPerMinute: 60 });
    const mediaId = await h.seedMedia(bot.tenantId, randomBytes(4096), 'image/png');
    const chats = [group(80), group(81), group(82)];
    const runId = await seedRun(bot, chats, [{ type: 'media', mediaId }]);
    fake.holdUploads();
    const job = h.runJob(runId);
    let released = 0;
    try {
      await eventually('one upload held and two lanes waiting', async () => fake.heldUploads() === 1 && h.deps.media.waiting(bot.accountId, mediaId) === 2, 10_000, 10);
      h.clock.advance(5_000);
      released = h.clock.now();
    } finally {
      fake.releaseUploads();
    }
    await job;
    await driveRun(h, runId);
    expect((await h.run(runId)).status).toBe('success');
    const byRef = fake
      .messages({ token: bot.token })
      .filter((m) => !m.upload)
      .map((m) => m.receivedAt)
      .sort((a, b) => a - b);
    expect(byRef).toHaveLength(2);
    expect(byRef[0]).toBeGreaterThanOrEqual(released);
    expect(byRef[1]).toBeGreaterThanOrEqual(released + 1_000);
  });

  test('a file_id Telegram no longer accepts is forgotten and the media uploaded again, not failed', async () => {
    const bot = await seedBot({ groupConcurrency: 1 });
    const mediaId = await h.seedMedia(bot.tenantId, randomBytes(1024), 'image/png');
    const first = await seedRun(bot, [group(90)], [{ type: 'media', mediaId }]);
    await driveRun(h, first);
    fake.forgetFiles(bot.token);
    const second = await seedRun(bot, [group(91), group(92)], [{ type: 'media', mediaId }]);
    await driveRun(h, second);
    expect((await h.run(second)).status).toBe('success');
    expect(fake.refusals({ token: bot.token }).map((r) => r.status)).toEqual([400]);
    // one upload per file_id's life: the first run's, then the one after it was refused
    expect(fake.messages({ token: bot.token }).filter((m) => m.upload)).toHaveLength(2);
    // the refusal counts no attempt: the part is sent again at once, uploading first
    expect((await h.targets(second)).map((t) => [t.status, t.attempts])).toEqual([
      ['sent', 1],
      ['sent', 1],
    ]);
  });

  test('when the uploading send fails, the next waiting lane uploads instead', async () => {
    const bot = await seedBot({ groupConcurrency: 3 });
    const mediaId = await h.seedMedia(bot.tenantId, randomBytes(4096), 'image/png');
    const chats = [group(70), group(71), group(72)];
    const runId = await seedRun(bot, chats, [{ type: 'media', mediaId }]);
    fake.holdUploads();
    fake.failNext(bot.token, 1, 502);
    const job = h.runJob(runId);
    try {
      await eventually('one upload held and two lanes waiting', async () => fake.heldUploads() === 1 && h.deps.media.waiting(bot.accountId, mediaId) === 2, 10_000, 10);
    } finally {
      fake.releaseUploads();
    }
    await job;
    await driveRun(h, runId);
    expect((await h.run(runId)).status).toBe('success');
    const refused = fake.refusals({ token: bot.token });
    expect(refused.map((r) => r.status)).toEqual([502]);
    // the refused chat was retried later, by file_id
    const all = fake.messages({ token: bot.token });
    expect(all.map((m) => m.chatId).sort()).toEqual([...chats].sort());
    expect(all.filter((m) => m.upload)).toHaveLength(1);
    expect(all.find((m) => m.chatId === refused[0]!.chatId)!.upload).toBe(false);
    const retried = (await h.targets(runId)).find((t) => t.chat_id === refused[0]!.chatId)!;
    expect(retried.attempts).toBe(2);
  });
});

describe('waits (429)', () => {
  test("a group's 429 holds that group only, for retry_after", async () => {
    const bot = await seedBot({ groupConcurrency: 2 });
    const chats = [group(100), group(101), group(102), group(103)];
    const runId = await seedRun(bot, chats, [text('hi')]);
    const t0 = h.clock.now();
    fake.floodChat(bot.token, chats[0]!, 25);
    await driveRun(h, runId);
    expect((await h.run(runId)).status).toBe('success');
    const refused = fake.refusals({ token: bot.token });
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ chatId: chats[0], status: 429, retryAfter: 25 });
    expect(fake.messages({ token: bot.token, chatId: chats[0] })[0]!.receivedAt).toBeGreaterThanOrEqual(t0 + 25_000);
    for (const chat of chats.slice(1)) expect(fake.messages({ token: bot.token, chatId: chat })[0]!.receivedAt).toBeLessThan(t0 + 25_000);
    const account = await h.tdb.db.selectFrom('accounts').select('blocked_until').where('id', '=', bot.accountId).executeTakeFirstOrThrow();
    expect(account.blocked_until).toBeNull();
    expect((await h.targets(runId)).every((t) => t.attempts === 1)).toBe(true);
  });

  test.each([
    ['private chats, a short wait', [user(1), user(2), user(3), user(4)], 30],
    ['groups, a wait longer than any per-group limit', [group(110), group(111), group(112), group(113)], 120],
  ])("the bot's 429 blocks the account (%s): blocked_until is set and nothing is sent before it", async (_name, chats, seconds) => {
    const bot = await seedBot({ groupConcurrency: 2 });
    const runId = await seedRun(bot, chats, [text('a'), text('b')]);
    const t0 = h.clock.now();
    fake.floodBot(bot.token, seconds);
    const first = await h.runJob(runId);
    expect(first).toBe('deferred');
    const account = await h.tdb.db.selectFrom('accounts').select('blocked_until').where('id', '=', bot.accountId).executeTakeFirstOrThrow();
    expect(account.blocked_until!.getTime()).toBeGreaterThanOrEqual(t0 + seconds * 1000);
    await driveRun(h, runId);
    expect((await h.run(runId)).status).toBe('success');
    // only sends already on the wire when the first 429 came back met it: at most one per lane
    expect(fake.refusals({ token: bot.token }).length).toBeLessThanOrEqual(2);
    const all = fake.messages({ token: bot.token });
    expect(all).toHaveLength(chats.length * 2);
    for (const m of all) expect(m.receivedAt).toBeGreaterThanOrEqual(t0 + seconds * 1000);
    expect((await h.targets(runId)).every((t) => t.attempts === 1)).toBe(true);
  });
});

describe('a group upgraded to a supergroup (migrate_to_chat_id)', () => {
  test('the target is renamed, in the run and the campaign, and the chat gets every part once under its new id', async () => {
    const bot = await seedBot({ groupConcurrency: 2 });
    const old = '-4001';
    const moved = '-1004001';
    const runId = await seedRun(bot, [group(200), old, group(201)], [text('one'), text('two')]);
    fake.migrateChat(bot.token, old, moved);
    await driveRun(h, runId);
    expect((await h.run(runId)).status).toBe('success');
    expect(fake.messages({ token: bot.token, chatId: old })).toHaveLength(0);
    expect(fake.messages({ token: bot.token, chatId: moved }).map((m) => m.text)).toEqual(['one', 'two']);
    const targets = await h.targets(runId);
    expect(targets.map((t) => t.chat_id).sort()).toEqual([group(200), group(201), moved].sort());
    // no attempt counted for the answer that named the new id
    expect(targets.find((t) => t.chat_id === moved)).toMatchObject({ status: 'sent', attempts: 1, parts_sent: 2 });
    expect(await campaignTargets(runId)).toEqual([group(200), moved, group(201)]);
  });

  test('a chat moved to one the run already targets is skipped: that chat gets the message once', async () => {
    const bot = await seedBot({ groupConcurrency: 1 });
    const old = '-4002';
    const moved = '-1004002';
    const runId = await seedRun(bot, [old, moved], [text('once')]);
    fake.migrateChat(bot.token, old, moved);
    await driveRun(h, runId);
    expect(fake.messages({ token: bot.token, chatId: moved }).map((m) => m.text)).toEqual(['once']);
    const targets = await h.targets(runId);
    expect(targets.find((t) => t.chat_id === old)).toMatchObject({ status: 'skipped', error_code: 'chat_migrated' });
    expect(targets.find((t) => t.chat_id === moved)).toMatchObject({ status: 'sent' });
    expect(await campaignTargets(runId)).toEqual([moved]);
  });
});

describe('chat and account errors', () => {
  test('kicked, blocked and unknown chats fail with their codes; the others are delivered', async () => {
    const bot = await seedBot({ groupConcurrency: 2 });
    const kicked = group(300);
    const notFound = group(301);
    const blocked = user(300);
    const fine = group(302);
    fake.setChatFault(bot.token, kicked, 'kicked');
    fake.setChatFault(bot.token, notFound, 'not_found');
    fake.setChatFault(bot.token, blocked, 'blocked');
    const runId = await seedRun(bot, [kicked, notFound, blocked, fine], [text('hi')]);
    await driveRun(h, runId);
    expect((await h.run(runId)).status).toBe('partial');
    const byChat = new Map((await h.targets(runId)).map((t) => [t.chat_id, t]));
    expect(byChat.get(kicked)).toMatchObject({ status: 'failed', error_code: 'bot_kicked', attempts: 1 });
    expect(byChat.get(notFound)).toMatchObject({ status: 'failed', error_code: 'chat_not_found', attempts: 1 });
    expect(byChat.get(blocked)).toMatchObject({ status: 'failed', error_code: 'bot_blocked', attempts: 1 });
    expect(byChat.get(fine)).toMatchObject({ status: 'sent' });
    expect(fake.messages({ token: bot.token }).map((m) => m.chatId)).toEqual([fine]);
  });

  test('a revoked token (401) disconnects the account and pauses its run, losing nothing', async () => {
    const bot = await seedBot({ groupConcurrency: 2 });
    const chats = [group(400), group(401), group(402)];
    const runId = await seedRun(bot, chats, [text('hi')]);
    fake.revoke(bot.token);
    expect(await h.runJob(runId)).toBe('no-account');
    const run = await h.run(runId);
    expect(run).toMatchObject({ status: 'paused', paused_reason: 'account_unavailable' });
    expect(run.error_summary).toContain('account_unauthorized');
    // the summary says what brings the bot back
    expect(run.error_summary).toContain(`PATCH /v1/accounts/${bot.accountId} {"credentials":{"botToken":"…"}}`);
    const account = await h.tdb.db.selectFrom('accounts').select('status').where('id', '=', bot.accountId).executeTakeFirstOrThrow();
    expect(account.status).toBe('disconnected');
    for (const t of await h.targets(runId)) expect(t).toMatchObject({ status: 'pending', attempts: 0 });
  });

  test('a 5xx is retried; a connection refused before anything was written is retried; a connection lost after the request was written is unknown', async () => {
    const bot = await seedBot({ groupConcurrency: 1 });
    // 5xx: retried with backoff, then delivered
    fake.failNext(bot.token, 1, 500);
    const retried = await seedRun(bot, [group(500)], [text('retry me')]);
    await driveRun(h, retried);
    expect(await h.targets(retried)).toMatchObject([{ status: 'sent', attempts: 2 }]);

    // refused: nothing reached Telegram
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const live = h.deps.transports['telegram'];
    const dead = new TelegramTransport({ baseUrl: `http://127.0.0.1:${deadPort}`, timeoutMs: 5000 });
    h.deps.transports['telegram'] = dead;
    try {
      const refused = await seedRun(bot, [group(501)], [text('refused')]);
      await h.runJob(refused);
      expect(await h.targets(refused)).toMatchObject([{ status: 'pending', attempts: 1, error_code: 'econnrefused' }]);
    } finally {
      h.deps.transports['telegram'] = live;
      await dead.close();
    }

    // lost after the write: Telegram may have sent it; never re-sent automatically
    const dropping = http.createServer((req) => {
      req.resume();
      req.on('end', () => req.socket.destroy());
    });
    await new Promise<void>((r) => dropping.listen(0, '127.0.0.1', r));
    const lossy = new TelegramTransport({ baseUrl: `http://127.0.0.1:${(dropping.address() as AddressInfo).port}`, timeoutMs: 5000 });
    h.deps.transports['telegram'] = lossy;
    try {
      const lost = await seedRun(bot, [group(502)], [text('lost')]);
      await driveRun(h, lost);
      expect(await h.targets(lost)).toMatchObject([{ status: 'unknown', attempts: 1 }]);
    } finally {
      h.deps.transports['telegram'] = live;
      await lossy.close();
      dropping.closeAllConnections();
      await new Promise<void>((r) => dropping.close(() => r()));
    }
  });
});

// Last (describe blocks run in order): every test above logged through this logger at trace level.
describe('secrets', () => {
  test('no bot token, nor its secret part, appears in any log line or stored error', async () => {
    expect(tokens.length).toBeGreaterThan(5);
    const logs = logLines.join('');
    // the failure paths, whose messages come from the network and from Telegram, were logged
    for (const code of ['econnrefused', 'account_unauthorized', 'bot_kicked', 'chat_flood_wait', 'flood_wait', 'http_500']) expect(logs).toContain(`"${code}"`);
    const stored = JSON.stringify(
      await h.tdb.db.selectFrom('run_targets').select(['error_message']).union(h.tdb.db.selectFrom('runs').select(['error_summary as error_message'])).execute(),
    );
    expect(stored).toContain('Telegram answered');
    for (const token of tokens) {
      const secret = token.slice(token.indexOf(':') + 1);
      expect(logs).not.toContain(secret);
      expect(stored).not.toContain(secret);
    }
    expect(logs).not.toContain('/bot');
  });
});
