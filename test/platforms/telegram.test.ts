import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TelegramTransport } from '@metronome/transports';
import { driveRun } from '../helpers/sender-harness.js';
import { expectNoTokenLeaked, group, telegramFile, text, user } from '../helpers/telegram-file.js';

// The Telegram transport driven by the real sender job (real PostgreSQL and Redis, manual
// clock) against a fake of the Bot API: waits, migrations, chat and account errors, secrets
// (media in telegram-media.test.ts).

const ctx = telegramFile();

describe('waits (429)', () => {
  test("a group's 429 holds that group only, for retry_after", async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 2 });
    const chats = [group(100), group(101), group(102), group(103)];
    const runId = await ctx.seedRun(bot, chats, [text('hi')]);
    const t0 = ctx.h.clock.now();
    ctx.fake.floodChat(bot.token, chats[0]!, 25);
    await driveRun(ctx.h, runId);
    expect((await ctx.h.run(runId)).status).toBe('success');
    const refused = ctx.fake.refusals({ token: bot.token });
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ chatId: chats[0], status: 429, retryAfter: 25 });
    expect(ctx.fake.messages({ token: bot.token, chatId: chats[0] })[0]!.receivedAt).toBeGreaterThanOrEqual(t0 + 25_000);
    for (const chat of chats.slice(1)) expect(ctx.fake.messages({ token: bot.token, chatId: chat })[0]!.receivedAt).toBeLessThan(t0 + 25_000);
    const account = await ctx.h.tdb.db.selectFrom('accounts').select('blocked_until').where('id', '=', bot.accountId).executeTakeFirstOrThrow();
    expect(account.blocked_until).toBeNull();
    expect((await ctx.h.targets(runId)).every((t) => t.attempts === 1)).toBe(true);
  });

  test.each([
    ['private chats, a short wait', [user(1), user(2), user(3), user(4)], 30],
    ['groups, a wait longer than any per-group limit', [group(110), group(111), group(112), group(113)], 120],
  ])("the bot's 429 blocks the account (%s): blocked_until is set and nothing is sent before it", async (_name, chats, seconds) => {
    const bot = await ctx.seedBot({ groupConcurrency: 2 });
    const runId = await ctx.seedRun(bot, chats, [text('a'), text('b')]);
    const t0 = ctx.h.clock.now();
    ctx.fake.floodBot(bot.token, seconds);
    const first = await ctx.h.runJob(runId);
    expect(first).toBe('deferred');
    const account = await ctx.h.tdb.db.selectFrom('accounts').select('blocked_until').where('id', '=', bot.accountId).executeTakeFirstOrThrow();
    expect(account.blocked_until!.getTime()).toBeGreaterThanOrEqual(t0 + seconds * 1000);
    await driveRun(ctx.h, runId);
    expect((await ctx.h.run(runId)).status).toBe('success');
    // only sends already on the wire when the first 429 came back met it: at most one per lane
    expect(ctx.fake.refusals({ token: bot.token }).length).toBeLessThanOrEqual(2);
    const all = ctx.fake.messages({ token: bot.token });
    expect(all).toHaveLength(chats.length * 2);
    for (const m of all) expect(m.receivedAt).toBeGreaterThanOrEqual(t0 + seconds * 1000);
    expect((await ctx.h.targets(runId)).every((t) => t.attempts === 1)).toBe(true);
  });
});

describe('a group upgraded to a supergroup (migrate_to_chat_id)', () => {
  test('the target is renamed, in the run and the campaign, and the chat gets every part once under its new id', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 2 });
    const old = '-4001';
    const moved = '-1004001';
    const runId = await ctx.seedRun(bot, [group(200), old, group(201)], [text('one'), text('two')]);
    ctx.fake.migrateChat(bot.token, old, moved);
    await driveRun(ctx.h, runId);
    expect((await ctx.h.run(runId)).status).toBe('success');
    expect(ctx.fake.messages({ token: bot.token, chatId: old })).toHaveLength(0);
    expect(ctx.fake.messages({ token: bot.token, chatId: moved }).map((m) => m.text)).toEqual(['one', 'two']);
    const targets = await ctx.h.targets(runId);
    expect(targets.map((t) => t.chat_id).sort()).toEqual([group(200), group(201), moved].sort());
    // no attempt counted for the answer that named the new id
    expect(targets.find((t) => t.chat_id === moved)).toMatchObject({ status: 'sent', attempts: 1, parts_sent: 2 });
    expect(await ctx.campaignTargets(runId)).toEqual([group(200), moved, group(201)]);
  });

  test('a chat moved to one the run already targets is skipped: that chat gets the message once', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 1 });
    const old = '-4002';
    const moved = '-1004002';
    const runId = await ctx.seedRun(bot, [old, moved], [text('once')]);
    ctx.fake.migrateChat(bot.token, old, moved);
    await driveRun(ctx.h, runId);
    expect(ctx.fake.messages({ token: bot.token, chatId: moved }).map((m) => m.text)).toEqual(['once']);
    const targets = await ctx.h.targets(runId);
    expect(targets.find((t) => t.chat_id === old)).toMatchObject({ status: 'skipped', error_code: 'chat_migrated' });
    expect(targets.find((t) => t.chat_id === moved)).toMatchObject({ status: 'sent' });
    expect(await ctx.campaignTargets(runId)).toEqual([moved]);
  });
});

describe('chat and account errors', () => {
  test('kicked, blocked and unknown chats fail with their codes; the others are delivered', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 2 });
    const kicked = group(300);
    const notFound = group(301);
    const blocked = user(300);
    const fine = group(302);
    ctx.fake.setChatFault(bot.token, kicked, 'kicked');
    ctx.fake.setChatFault(bot.token, notFound, 'not_found');
    ctx.fake.setChatFault(bot.token, blocked, 'blocked');
    const runId = await ctx.seedRun(bot, [kicked, notFound, blocked, fine], [text('hi')]);
    await driveRun(ctx.h, runId);
    expect((await ctx.h.run(runId)).status).toBe('partial');
    const byChat = new Map((await ctx.h.targets(runId)).map((t) => [t.chat_id, t]));
    expect(byChat.get(kicked)).toMatchObject({ status: 'failed', error_code: 'bot_kicked', attempts: 1 });
    expect(byChat.get(notFound)).toMatchObject({ status: 'failed', error_code: 'chat_not_found', attempts: 1 });
    expect(byChat.get(blocked)).toMatchObject({ status: 'failed', error_code: 'bot_blocked', attempts: 1 });
    expect(byChat.get(fine)).toMatchObject({ status: 'sent' });
    expect(ctx.fake.messages({ token: bot.token }).map((m) => m.chatId)).toEqual([fine]);
  });

  test('a revoked token (401) disconnects the account and pauses its run, losing nothing', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 2 });
    const chats = [group(400), group(401), group(402)];
    const runId = await ctx.seedRun(bot, chats, [text('hi')]);
    ctx.fake.revoke(bot.token);
    expect(await ctx.h.runJob(runId)).toBe('no-account');
    const run = await ctx.h.run(runId);
    expect(run).toMatchObject({ status: 'paused', paused_reason: 'account_unavailable' });
    expect(run.error_summary).toContain('account_unauthorized');
    // the summary says what brings the bot back
    expect(run.error_summary).toContain(`PATCH /v1/accounts/${bot.accountId} {"credentials":{"botToken":"…"}}`);
    const account = await ctx.h.tdb.db.selectFrom('accounts').select('status').where('id', '=', bot.accountId).executeTakeFirstOrThrow();
    expect(account.status).toBe('disconnected');
    for (const t of await ctx.h.targets(runId)) expect(t).toMatchObject({ status: 'pending', attempts: 0 });
  });

  test('a 5xx after the request was written is unknown; a connection refused before anything was written is retried; a connection lost after the request was written is unknown', async () => {
    const bot = await ctx.seedBot({ groupConcurrency: 1 });
    // 5xx to the whole request: Telegram may have posted it, so it is never re-sent on its own
    ctx.fake.failNext(bot.token, 1, 500);
    const answered = await ctx.seedRun(bot, [group(500)], [text('maybe posted')]);
    await driveRun(ctx.h, answered);
    expect(await ctx.h.targets(answered)).toMatchObject([{ status: 'unknown', attempts: 1, error_code: 'http_500' }]);
    expect(ctx.fake.refusals({ token: bot.token }).map((r) => r.status)).toEqual([500]);

    // refused: nothing reached Telegram
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const live = ctx.h.deps.transports['telegram'];
    const dead = new TelegramTransport({ baseUrl: `http://127.0.0.1:${deadPort}`, timeoutMs: 5000 });
    ctx.h.deps.transports['telegram'] = dead;
    try {
      const refused = await ctx.seedRun(bot, [group(501)], [text('refused')]);
      await ctx.h.runJob(refused);
      expect(await ctx.h.targets(refused)).toMatchObject([{ status: 'pending', attempts: 1, error_code: 'econnrefused' }]);
    } finally {
      ctx.h.deps.transports['telegram'] = live;
      await dead.close();
    }

    // lost after the write: Telegram may have sent it; never re-sent automatically
    const dropping = http.createServer((req) => {
      req.resume();
      req.on('end', () => req.socket.destroy());
    });
    await new Promise<void>((r) => dropping.listen(0, '127.0.0.1', r));
    const lossy = new TelegramTransport({ baseUrl: `http://127.0.0.1:${(dropping.address() as AddressInfo).port}`, timeoutMs: 5000 });
    ctx.h.deps.transports['telegram'] = lossy;
    try {
      const lost = await ctx.seedRun(bot, [group(502)], [text('lost')]);
      await driveRun(ctx.h, lost);
      expect(await ctx.h.targets(lost)).toMatchObject([{ status: 'unknown', attempts: 1 }]);
    } finally {
      ctx.h.deps.transports['telegram'] = live;
      await lossy.close();
      dropping.closeAllConnections();
      await new Promise<void>((r) => dropping.close(() => r()));
    }
  });
});

// Last (describe blocks run in order): every test above logged through this logger at trace level.
describe('secrets', () => {
  test('no bot token, nor its secret part, appears in any log line or stored error', async () => {
    // the failure paths, whose messages come from the network and from Telegram, were logged
    await expectNoTokenLeaked(ctx, ['econnrefused', 'account_unauthorized', 'bot_kicked', 'chat_flood_wait', 'flood_wait', 'http_500']);
    const stored = JSON.stringify(
      await ctx.h.tdb.db
        .selectFrom('runs')
        .select(['error_summary'])
        .union(ctx.h.tdb.db.selectFrom('run_targets').select(['error_message as error_summary']))
        .execute(),
    );
    expect(stored).toContain('Telegram answered');
  });
});
