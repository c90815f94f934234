import { driveRun as drive, startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';
import { busiestWindow } from '../helpers/platform-record.js';

// The ban-safety kit in the sender: human gap, hourly and daily caps over rolling windows, the
// warm-up ramp, and their rebuild from PostgreSQL after Redis lost them; judged by what the
// sandbox received, on real PostgreSQL, Redis and sandbox, with a manual clock.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const text = (t: string) => ({ type: 'text' as const, text: t });
const chats = (n: number) => Array.from({ length: n }, (_, i) => `chat-${i}`);
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

let h: SenderHarness;
beforeEach(async () => {
  h = await startSenderHarness({ maxInlineWaitMs: 2_000 });
});
afterEach(async () => {
  await h.close();
});

async function account(settings: {
  sendDelay?: [number, number];
  hourlyCap?: number;
  dailyCap?: number;
  warmup?: { startedAt: string; steps: { afterDays: number; dailyCap: number | null }[] };
}) {
  const seeded = await h.seedAccount();
  await h.tdb.db
    .updateTable('accounts')
    .set({
      send_delay_min_seconds: settings.sendDelay?.[0] ?? null,
      send_delay_max_seconds: settings.sendDelay?.[1] ?? null,
      hourly_cap: settings.hourlyCap ?? null,
      daily_cap: settings.dailyCap ?? null,
      warmup: settings.warmup ? JSON.stringify(settings.warmup) : null,
    })
    .where('id', '=', seeded.accountId)
    .execute();
  return seeded;
}

const times = async (externalId: string) => (await h.sandboxGet<{ times: number[] }>(`/sandbox/accounts/${externalId}/sends`)).times;

/** The account's keys in Redis, as a flush of this deployment's prefix would leave them: gone. */
async function forgetRedis(accountId: string): Promise<number> {
  const found = await h.redis.keys(`*:account:${accountId}:*`);
  return found.length > 0 ? h.redis.del(...found) : 0;
}

describe('human pacing (sendDelaySeconds)', () => {
  test('each send waits a random time in [min, max] after the previous one, drawn from the injected source', async () => {
    const draws = [0.9, 0.1, 0.6, 0.3, 0.75];
    let i = 0;
    h.deps.random = () => draws[i++ % draws.length]!;
    const { tenantId, accountId, externalId } = await account({ sendDelay: [1, 3] });
    const runId = await h.seedRun({ tenantId, accountId, targets: chats(8), parts: [text('hi')] });
    await drive(h, runId);
    expect((await h.run(runId)).status).toBe('success');
    const spaced = gaps(await times(externalId));
    expect(spaced).toHaveLength(7);
    for (const gap of spaced) {
      expect(gap).toBeGreaterThanOrEqual(1_000);
      expect(gap).toBeLessThanOrEqual(3_000 + 100);
    }
    // random, not a fixed interval (nor always the minimum)
    expect(new Set(spaced).size).toBeGreaterThanOrEqual(3);
    expect(Math.max(...spaced) - Math.min(...spaced)).toBeGreaterThan(1_000);
  });

  test('after Redis lost the account, its next send still waits at least min after the last one PostgreSQL knows', async () => {
    const { tenantId, accountId, externalId } = await account({ sendDelay: [5, 5] });
    const first = await h.seedRun({ tenantId, accountId, targets: chats(2), parts: [text('a')] });
    await drive(h, first);
    expect(await forgetRedis(accountId)).toBeGreaterThan(0);
    h.clock.advance(1_000);
    const second = await h.seedRun({ tenantId, accountId, targets: ['late-1', 'late-2'], parts: [text('b')] });
    await drive(h, second);
    const spaced = gaps(await times(externalId));
    expect(spaced).toHaveLength(3);
    for (const gap of spaced) expect(gap).toBeGreaterThanOrEqual(5_000);
  });
});

describe('caps over rolling windows', () => {
  test('never more than hourlyCap in any hour or dailyCap in any 24 hours; the run waits and finishes', async () => {
    const { tenantId, accountId, externalId } = await account({ hourlyCap: 3, dailyCap: 5 });
    const start = h.clock.now();
    const runId = await h.seedRun({ tenantId, accountId, targets: chats(12), parts: [text('hi')] });
    await drive(h, runId);
    expect((await h.run(runId)).status).toBe('success');
    const sent = await times(externalId);
    expect(sent).toHaveLength(12);
    expect(busiestWindow(sent, HOUR - 1).most).toBe(3);
    expect(busiestWindow(sent, DAY - 1).most).toBe(5);
    // and no slower than the caps allow: 12 sends at 5 a day take a little over two days
    expect(sent.at(-1)! - start).toBeLessThan(2 * DAY + 2 * HOUR);
  });

  test("a run that meets the cap waits in its targets' place, no attempt counted, and continues when a slot frees", async () => {
    const { tenantId, accountId } = await account({ hourlyCap: 2 });
    const start = h.clock.now();
    const runId = await h.seedRun({ tenantId, accountId, targets: chats(3), parts: [text('hi')] });
    await h.runJob(runId);
    const targets = await h.targets(runId);
    expect(targets.filter((t) => t.status === 'sent')).toHaveLength(2);
    expect(targets.filter((t) => t.status === 'pending').every((t) => t.attempts === 0)).toBe(true);
    const run = await h.run(runId);
    const job = await h.deps.queue.queue.getJob(run.job_id!);
    // the continuation is due when the first send leaves the (one second wider) hour
    expect(start + (job?.opts.delay ?? 0)).toBeGreaterThanOrEqual(start + HOUR);
    expect(start + (job?.opts.delay ?? 0)).toBeLessThanOrEqual(start + HOUR + 2_000);
  });

  test('a cap that frees a slot only after the delivery window closes pauses the run now, saying so', async () => {
    const { tenantId, accountId } = await account({ hourlyCap: 2 });
    const runId = await h.seedRun({ tenantId, accountId, targets: chats(4), parts: [text('hi')], windowEndAt: new Date(h.clock.now() + 30 * 60_000) });
    await h.runJob(runId);
    const run = await h.run(runId);
    expect(run).toMatchObject({ status: 'paused', paused_reason: 'window_closed' });
    expect(run.error_summary).toMatch(/^The account's hourly or daily cap is met until \d\d:\d\d \(UTC\), after the delivery window closes\. /);
    expect((await h.targets(runId)).filter((t) => t.status === 'sent')).toHaveLength(2);
  });

  test('after Redis lost the account, the windows are rebuilt from PostgreSQL: the cap still holds', async () => {
    const { tenantId, accountId, externalId } = await account({ hourlyCap: 3 });
    const first = await h.seedRun({ tenantId, accountId, targets: chats(2), parts: [text('a')] });
    await drive(h, first);
    await forgetRedis(accountId);
    h.clock.advance(60_000);
    const second = await h.seedRun({ tenantId, accountId, targets: ['x-1', 'x-2', 'x-3'], parts: [text('b')] });
    await h.runJob(second);
    expect(await times(externalId)).toHaveLength(3);
    await drive(h, second);
    expect(busiestWindow(await times(externalId), HOUR - 1).most).toBe(3);
  });

  test('an account with none of the settings keeps the plain pace: nothing of the kit in Redis', async () => {
    const { tenantId, accountId } = await h.seedAccount();
    const runId = await h.seedRun({ tenantId, accountId, targets: chats(3), parts: [text('hi')] });
    await drive(h, runId);
    expect(await h.redis.keys(`*:account:${accountId}:sends`)).toEqual([]);
    expect(await h.redis.keys(`*:account:${accountId}:gap`)).toEqual([]);
  });
});

describe('warm-up', () => {
  test("the daily cap follows the ramp: today's step, then the next, then none", async () => {
    const { tenantId, accountId, externalId } = await account({
      warmup: {
        startedAt: new Date(h.clock.now()).toISOString(),
        steps: [
          { afterDays: 0, dailyCap: 2 },
          { afterDays: 1, dailyCap: 3 },
          { afterDays: 3, dailyCap: null },
        ],
      },
      dailyCap: 100,
    });
    const start = h.clock.now();
    const runId = await h.seedRun({ tenantId, accountId, targets: chats(12), parts: [text('hi')] });
    await drive(h, runId);
    expect((await h.run(runId)).status).toBe('success');
    const sent = await times(externalId);
    const onDay = (d: number) => sent.filter((t) => t >= start + d * DAY && t < start + (d + 1) * DAY).length;
    expect(onDay(0)).toBe(2);
    // day 1 (cap 3) and day 2 (cap 3, a rolling 24 hours)
    expect(
      busiestWindow(
        sent.filter((t) => t < start + 3 * DAY),
        DAY - 1,
      ).most,
    ).toBeLessThanOrEqual(3);
    // from day 3 on the warm-up is over: the rest goes out at once
    expect(onDay(3)).toBe(12 - sent.filter((t) => t < start + 3 * DAY).length);
    expect(onDay(3)).toBeGreaterThan(3);
  });
});

describe('suppression', () => {
  test('a chat that answered forbidden or not found joins the list; the next run skips it (code suppressed)', async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount();
    await h.sandboxPut(`/sandbox/chats/${externalId}/gone`, { error: 'chat_not_found' });
    await h.sandboxPut(`/sandbox/chats/${externalId}/closed`, { error: 'forbidden' });
    await h.sandboxPut(`/sandbox/chats/${externalId}/broken`, { error: 'message_invalid' });
    const first = await h.seedRun({ tenantId, accountId, targets: ['gone', 'closed', 'broken', 'fine'], parts: [text('a')] });
    await drive(h, first);
    const listed = await h.tdb.db
      .selectFrom('account_suppressions')
      .select(['chat_id', 'reason'])
      .where('account_id', '=', accountId)
      .orderBy('chat_id')
      .execute();
    expect(listed).toEqual([
      { chat_id: 'closed', reason: 'forbidden' },
      { chat_id: 'gone', reason: 'chat_not_found' },
    ]);
    const second = await h.seedRun({ tenantId, accountId, targets: ['gone', 'closed', 'broken', 'fine'], parts: [text('b')] });
    await drive(h, second);
    const targets = await h.targets(second);
    expect(targets.map((t) => [t.chat_id, t.status, t.error_code])).toEqual([
      ['broken', 'failed', 'message_invalid'],
      ['closed', 'skipped', 'suppressed'],
      ['fine', 'sent', null],
      ['gone', 'skipped', 'suppressed'],
    ]);
    // the platform heard from neither suppressed chat again
    const rejected = (await h.sandboxGet<{ items: { chatId: string }[] }>(`/sandbox/rejections?account=${externalId}`)).items.map((r) => r.chatId);
    expect(rejected.filter((c) => c === 'gone' || c === 'closed')).toHaveLength(2);
  });
});
