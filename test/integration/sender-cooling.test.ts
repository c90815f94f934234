import pg from 'pg';
import { DEFAULT_COOLING } from '@metronome/core';
import { ScheduleRepository } from '@metronome/db';
import { reconcile } from '../../services/scheduler/src/reconcile.js';
import { driveRun as drive, startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';
import { eventually } from '../helpers/test-env.js';

// Automatic cooling in the sender and the scheduler's reconciler, on real PostgreSQL, Redis and
// sandbox, with a manual clock: more than K flood waits in an hour (or too many failed sends)
// cool the account, its runs wait and send nothing, the reconciler ends the cooling at its
// `until`, and the lowered pace comes back step by step. Judged by what the sandbox received.

const MIN = 60_000;
const text = (t: string) => ({ type: 'text' as const, text: t });
const chats = (n: number, prefix = 'chat') => Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`);
const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i]!);

let h: SenderHarness;
beforeEach(async () => {
  // a short failure window (N = 10) keeps the failure test small; K, X and the times are the defaults
  h = await startSenderHarness({ maxInlineWaitMs: 5_000, cooling: { ...DEFAULT_COOLING, failureWindow: 10 } });
});
afterEach(async () => {
  await h.close();
});

const times = async (externalId: string) => (await h.sandboxGet<{ times: number[] }>(`/sandbox/accounts/${externalId}/sends`)).times;
const accountRow = (id: string) =>
  h.tdb.db
    .selectFrom('accounts')
    .select(['status', 'cooling_reason', 'cooling_until', 'cooling_since', 'pace_factor'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

/** The account events PostgreSQL notifies (what /v1/events relays), as they come. */
async function listenAccountEvents(): Promise<{ events: Record<string, unknown>[]; close: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: h.tdb.url });
  await client.connect();
  const events: Record<string, unknown>[] = [];
  client.on('notification', (msg) => {
    const v = JSON.parse(msg.payload ?? '{}') as Record<string, unknown>;
    if (v['type'] === 'account') events.push(v);
  });
  await client.query('listen metronome_run_events');
  return { events, close: () => client.end() };
}

/** One job of the run that meets a flood wait the sandbox forces (60 s), then the clock moves to its continuation. */
async function jobWithFloodWait(runId: string, externalId: string): Promise<void> {
  await h.sandboxPut(`/sandbox/accounts/${externalId}`, { floodWaitSeconds: 60 });
  await h.runJob(runId);
  await toNextJob(runId);
}

async function toNextJob(runId: string): Promise<number> {
  const run = await h.run(runId);
  const job = await h.deps.queue.queue.getJob(run.job_id!);
  const delay = job?.opts.delay ?? 0;
  h.clock.advance(delay);
  return delay;
}

const reconcileNow = () =>
  reconcile({
    repo: new ScheduleRepository(h.tdb.db),
    queue: h.deps.queue,
    clock: h.clock,
    logger: h.deps.logger,
    metrics: h.metrics,
    pausedRunTtlMs: 7 * 86_400_000,
  });

describe('flood waits', () => {
  test('K + 1 flood waits in an hour cool the account: an event with the reason, a halved pace, a run that waits and sends nothing; at `until` it lifts and the pace recovers step by step', async () => {
    h.deps.settings.sendsPerJob = 6;
    // one lane: the manual clock moves with each sleep, so parallel lanes would blur the gaps the test reads
    const { tenantId, accountId, externalId } = await h.seedAccount({ maxSendPerMinute: 40, groupConcurrency: 1 });
    const runId = await h.seedRun({ tenantId, accountId, targets: chats(30), parts: [text('hi')] });
    const listener = await listenAccountEvents();
    try {
      // K = 3 waits: still active
      for (let i = 0; i < 3; i++) await jobWithFloodWait(runId, externalId);
      expect((await accountRow(accountId)).status).toBe('active');
      // the fourth within the hour cools it
      await h.sandboxPut(`/sandbox/accounts/${externalId}`, { floodWaitSeconds: 60 });
      const cooledAt = h.clock.now();
      await h.runJob(runId);
      const cooled = await accountRow(accountId);
      expect(cooled).toMatchObject({ status: 'cooling', cooling_reason: 'flood_waits', pace_factor: 0.5 });
      // for 30 minutes from the end of the job that heard the fourth wait
      expect(cooled.cooling_since!.getTime()).toBeGreaterThanOrEqual(cooledAt);
      expect(cooled.cooling_since!.getTime()).toBeLessThanOrEqual(h.clock.now());
      expect(cooled.cooling_until!.getTime()).toBe(cooled.cooling_since!.getTime() + 30 * MIN);
      expect(await h.metrics.registry.getSingleMetricAsString('metronome_account_cooling_total')).toMatch(
        /platform="http",reason="flood_waits",service="sender-test"} 1/,
      );
      await eventually('the cooling event', async () => listener.events.length >= 1, 5_000, 20);
      expect(listener.events[0]).toMatchObject({ accountId, status: 'cooling', reason: 'flood_waits', until: cooled.cooling_until!.toISOString() });

      // The run waits: its job sends nothing and comes back just after `until`.
      const sentBefore = (await times(externalId)).length;
      expect(await h.runJob(runId)).toBe('deferred');
      const job = await h.deps.queue.queue.getJob((await h.run(runId)).job_id!);
      expect(h.clock.now() + (job?.opts.delay ?? 0)).toBeGreaterThan(cooled.cooling_until!.getTime());
      expect((await times(externalId)).length).toBe(sentBefore);

      // the reconciler ends it at `until`, not a moment before
      h.clock.set(cooled.cooling_until!.getTime() - 1);
      await reconcileNow();
      expect((await accountRow(accountId)).status).toBe('cooling');
      // a job that comes before the reconciler ended it looks again shortly, sending nothing
      expect(await h.runJob(runId)).toBe('deferred');
      expect((await times(externalId)).length).toBe(sentBefore);
      h.clock.set(cooled.cooling_until!.getTime());
      await reconcileNow();
      expect((await accountRow(accountId)).status).toBe('active');
      await eventually('the event of its end', async () => listener.events.length >= 2, 5_000, 20);
      expect(listener.events[1]).toEqual({ type: 'account', accountId, tenantId, status: 'active' });

      // At the halved pace (20/min) the sends are about 3 s apart ...
      const liftedAt = h.clock.now();
      await sendFor(runId, 6);
      const slow = gaps((await times(externalId)).filter((t) => t >= liftedAt));
      for (const g of slow) expect(g).toBeGreaterThanOrEqual(3_000);
      // ... 10 clean minutes later +10 % (24/min, 2.5 s) ...
      h.clock.set(liftedAt + 10 * MIN);
      const stepAt = h.clock.now();
      await sendFor(runId, 6);
      const step = gaps((await times(externalId)).filter((t) => t >= stepAt));
      for (const g of step) expect(g).toBeGreaterThanOrEqual(2_500);
      expect(Math.min(...step)).toBeLessThan(3_000);
      // ... and after 50 clean minutes the configured 40/min (1.5 s) again.
      h.clock.set(liftedAt + 50 * MIN);
      const fullAt = h.clock.now();
      await drive(h, runId);
      const full = gaps((await times(externalId)).filter((t) => t >= fullAt));
      expect(full.length).toBeGreaterThan(3);
      expect(Math.min(...full)).toBeLessThan(2_000);
      expect((await h.run(runId)).status).toBe('success');
    } finally {
      await listener.close();
    }
  });

  test('K waits in an hour and one more after the oldest left the hour do not cool', async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount({ maxSendPerMinute: 40 });
    const runId = await h.seedRun({ tenantId, accountId, targets: chats(5), parts: [text('hi')] });
    await jobWithFloodWait(runId, externalId);
    h.clock.advance(40 * MIN);
    for (let i = 0; i < 2; i++) await jobWithFloodWait(runId, externalId);
    h.clock.advance(20 * MIN);
    await jobWithFloodWait(runId, externalId);
    expect((await accountRow(accountId)).status).toBe('active');
    await drive(h, runId);
    expect((await h.run(runId)).status).toBe('success');
  });
});

describe('terminal failures', () => {
  test('more than X % of the last N sends failed cool the account (reason failures), never before N sends', async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount();
    // 3 of the first 9 chats fail for good (message_invalid): 33 %, but fewer than N = 10 sends
    for (const chat of ['c-01', 'c-04', 'c-07']) await h.sandboxPut(`/sandbox/chats/${externalId}/${chat}`, { error: 'message_invalid' });
    const first = await h.seedRun({ tenantId, accountId, targets: chats(9, 'c'), parts: [text('hi')] });
    await drive(h, first);
    expect((await h.targets(first)).filter((t) => t.status === 'failed')).toHaveLength(3);
    expect((await accountRow(accountId)).status).toBe('active');
    // the tenth send makes N: 3 of 10 failed, above 20 %
    const second = await h.seedRun({ tenantId, accountId, targets: ['d-00'], parts: [text('hi')] });
    await h.runJob(second);
    expect(await accountRow(accountId)).toMatchObject({ status: 'cooling', cooling_reason: 'failures' });
  });

  test('a run whose delivery window closes before the cooling ends pauses at once, saying so', async () => {
    h.deps.settings.sendsPerJob = 10;
    const { tenantId, accountId, externalId } = await h.seedAccount();
    for (const chat of ['c-00', 'c-01', 'c-02']) await h.sandboxPut(`/sandbox/chats/${externalId}/${chat}`, { error: 'message_invalid' });
    const runId = await h.seedRun({ tenantId, accountId, targets: chats(14, 'c'), parts: [text('hi')], windowEndAt: new Date(h.clock.now() + 20 * MIN) });
    await h.runJob(runId);
    expect((await accountRow(accountId)).status).toBe('cooling');
    const run = await h.run(runId);
    expect(run).toMatchObject({ status: 'paused', paused_reason: 'window_closed' });
    expect(run.error_summary).toMatch(
      /^The account is cooling until \d\d:\d\d \(UTC\): more than 20 % of its last 10 sends failed, after the delivery window closes\. /,
    );
    const targets = await h.targets(runId);
    expect(targets.filter((t) => t.status === 'pending')).toHaveLength(4);
    expect(await times(externalId)).toHaveLength(7);
  });

  test('another run of a cooling account waits with it, sending nothing', async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount();
    await h.tdb.db
      .updateTable('accounts')
      .set({ status: 'cooling', cooling_since: new Date(h.clock.now()), cooling_until: new Date(h.clock.now() + 30 * MIN), cooling_reason: 'failures' })
      .where('id', '=', accountId)
      .execute();
    const runId = await h.seedRun({ tenantId, accountId, targets: chats(3), parts: [text('hi')] });
    expect(await h.runJob(runId)).toBe('deferred');
    expect((await h.run(runId)).status).toBe('queued');
    expect(await times(externalId)).toHaveLength(0);
  });
});

describe('cost', () => {
  test('a healthy account writes its record until it holds N sends, then nothing more while every send is delivered', async () => {
    const { tenantId, accountId } = await h.seedAccount();
    const health = () => h.tdb.db.selectFrom('accounts').select(['send_outcomes', 'updated_at']).where('id', '=', accountId).executeTakeFirstOrThrow();
    await drive(h, await h.seedRun({ tenantId, accountId, targets: chats(12), parts: [text('hi')] }));
    const full = await health();
    expect(full.send_outcomes).toBe('s'.repeat(10));
    h.clock.advance(MIN);
    await drive(h, await h.seedRun({ tenantId, accountId, targets: chats(5, 'x'), parts: [text('hi')] }));
    expect((await health()).updated_at).toEqual(full.updated_at);
  });
});

/** Runs jobs of the run, following its continuations, until `n` more sends reached the sandbox. */
async function sendFor(runId: string, n: number): Promise<void> {
  const ext = await h.tdb.db
    .selectFrom('runs as r')
    .innerJoin('accounts as a', 'a.id', 'r.account_id')
    .select('a.external_id')
    .where('r.id', '=', runId)
    .executeTakeFirstOrThrow();
  const target = (await times(ext.external_id!)).length + n;
  for (let i = 0; i < 50 && (await times(ext.external_id!)).length < target; i++) {
    await h.runJob(runId);
    await toNextJob(runId);
  }
}
