import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { MessagePart } from '@metronome/db';
import { createLogger } from '@metronome/observability';
import { reportingEvents } from '../../services/sender/src/reporting-events.js';
import type { FakeTelegramBotApi } from './fake-telegram-bot-api.js';
import type { SenderHarness } from './sender-harness.js';
import { startTelegramHarness } from './telegram-harness.js';

/** What the Telegram test files share: the harness, the fake Bot API, bots and runs. */
export interface TelegramFile {
  fake: FakeTelegramBotApi;
  h: SenderHarness;
  /** every log line of the sender, to check no bot token ever reaches one */
  logLines: string[];
  /** every bot token made so far */
  tokens: string[];
  seedBot(opts?: { groupConcurrency?: number; maxSendPerMinute?: number }): Promise<{ tenantId: string; accountId: string; externalId: string; token: string }>;
  seedRun(bot: { tenantId: string; accountId: string }, targets: string[], parts: MessagePart[]): Promise<string>;
  /** the campaign's targets, as the run's campaign holds them now */
  campaignTargets(runId: string): Promise<string[]>;
}

/**
 * The file's last test: no bot token, nor its secret part, in any log line or stored error of
 * the file's tests. `loggedCodes`: error codes the file's failure paths must have logged (so
 * the check looked at lines that could have held a token).
 */
export async function expectNoTokenLeaked(ctx: TelegramFile, loggedCodes: string[]): Promise<void> {
  expect(ctx.tokens.length).toBeGreaterThan(5);
  const logs = ctx.logLines.join('');
  for (const code of loggedCodes) expect(logs).toContain(`"${code}"`);
  const stored = JSON.stringify(
    await ctx.h.tdb.db
      .selectFrom('run_targets')
      .select(['error_message'])
      .union(ctx.h.tdb.db.selectFrom('runs').select(['error_summary as error_message']))
      .execute(),
  );
  for (const token of ctx.tokens) {
    const secret = token.slice(token.indexOf(':') + 1);
    expect(logs).not.toContain(secret);
    expect(stored).not.toContain(secret);
  }
  expect(logs).not.toContain('/bot');
}

export const text = (t: string): MessagePart => ({ type: 'text', text: t });
export { imageBytes } from './fake-telegram-files.js';
/** supergroup ids are negative; a user's private chat id is positive */
export const group = (i: number) => `-100${2_000_000 + i}`;
export const user = (i: number) => String(3_000_000 + i);

/**
 * The Telegram transport driven by the real sender job (real PostgreSQL and Redis, manual
 * clock) against a fake of the Bot API, for one test file: registers its beforeAll/afterAll
 * and returns the file's context (its `fake` and `h` are set once beforeAll has run).
 */
export function telegramFile(): TelegramFile {
  let nextBot = 500_000;
  const ctx = { logLines: [] as string[], tokens: [] as string[] } as unknown as TelegramFile;
  beforeAll(async () => {
    ({ fake: ctx.fake, h: ctx.h } = await startTelegramHarness({ chatPacePerMinute: { telegram: 20 }, maxRetries: 3 }));
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        ctx.logLines.push(chunk.toString('utf8'));
        done();
      },
    });
    // the job reports through its event bus: one wired to this logger, as main.ts wires the replica's
    ctx.h.deps.logger = createLogger('sender-test', 'trace', sink);
    ctx.h.deps.events = reportingEvents(ctx.h.deps.metrics, ctx.h.deps.logger);
  });
  afterAll(async () => {
    await ctx.h?.close();
    await ctx.fake?.close();
  });
  ctx.seedBot = async (opts = {}) => {
    const botId = String(nextBot++);
    const token = `${botId}:${randomBytes(24).toString('base64url')}`;
    ctx.tokens.push(token);
    ctx.fake.addBot(token);
    const a = await ctx.h.seedAccount({ ...opts, platform: 'telegram', externalId: botId, credentials: { botToken: token } });
    return { ...a, token };
  };
  ctx.seedRun = (bot, targets, parts) => ctx.h.seedRun({ tenantId: bot.tenantId, accountId: bot.accountId, targets, parts });
  ctx.campaignTargets = async (runId) => {
    const row = await ctx.h.tdb.db
      .selectFrom('runs as r')
      .innerJoin('campaigns as c', 'c.id', 'r.campaign_id')
      .select('c.targets')
      .where('r.id', '=', runId)
      .executeTakeFirstOrThrow();
    return row.targets;
  };
  return ctx;
}
