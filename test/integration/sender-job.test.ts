import { PACE_MARGIN } from '@metronome/core';
import { driveRun as drive, startSenderHarness, type SenderHarness } from '../helpers/sender-harness.js';

// The sender's job on real PostgreSQL, Redis and sandbox, one job at a time on a manual clock.

const text = (t: string) => ({ type: 'text' as const, text: t });

interface Msg {
  chatId: string;
  partIndex: number;
  seq: number;
  receivedAt: number;
  part: { type: string; mediaRef?: string };
}

describe('sending a run', () => {
  let h: SenderHarness;
  beforeEach(async () => {
    h = await startSenderHarness({ sendsPerJob: 4 });
  });
  afterEach(async () => {
    await h.close();
  });

  test('all chats get every part in order across bounded jobs; the media is uploaded once', async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount({ groupConcurrency: 3 });
    const mediaId = await h.seedMedia(tenantId, Buffer.from('pretend png bytes'));
    const chats = Array.from({ length: 7 }, (_, i) => `chat-${i}`);
    const runId = await h.seedRun({ tenantId, accountId, targets: chats, parts: [text('hi'), { type: 'media', mediaId, caption: 'c' }] });
    const outcomes = await drive(h, runId);
    // 14 parts at SENDS_PER_JOB=4 → several jobs, each one outcome
    expect(outcomes.length).toBeGreaterThanOrEqual(4);
    expect(outcomes.every((o) => o === 'sent')).toBe(true);
    expect((await h.run(runId)).status).toBe('success');
    const { items } = await h.sandboxGet<{ items: Msg[] }>(`/sandbox/messages?account=${externalId}`);
    for (const chat of chats) expect(items.filter((m) => m.chatId === chat).map((m) => m.partIndex)).toEqual([0, 1]);
    const stats = await h.sandboxGet<{ uploads: { count: number }[]; duplicateKeys: number }>('/sandbox/stats');
    expect(stats.uploads).toEqual([expect.objectContaining({ account: externalId, count: 1 })]);
    expect(stats.duplicateKeys).toBe(0);
    expect((await h.targets(runId)).every((t) => t.status === 'sent' && t.parts_sent === 2 && t.attempts === 1)).toBe(true);
  });

  test('never early: a job that fires before scheduledAt defers to it', async () => {
    const { tenantId, accountId } = await h.seedAccount();
    const runId = await h.seedRun({ tenantId, accountId, targets: ['a'], parts: [text('x')], scheduledAt: new Date(h.clock.now() + 5000) });
    expect(await h.runJob(runId)).toBe('deferred');
    const job = await h.deps.queue.queue.getJob((await h.run(runId)).job_id!);
    expect(job!.opts.delay).toBe(5000);
    expect((await h.targets(runId))[0]!.status).toBe('pending');
  });

  test('chats due within the inline wait go in the same job, each not before it is due', async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount({ groupConcurrency: 3 });
    const runId = await h.seedRun({ tenantId, accountId, targets: ['a', 'b', 'c'], parts: [text('x')] });
    // held a little longer each, as a per-chat interval does after the previous run's sends
    const start = h.clock.now();
    for (const [chat, ms] of [
      ['b', 300],
      ['c', 600],
    ] as const) {
      await h.tdb.db
        .updateTable('run_targets')
        .set({ next_attempt_at: new Date(start + ms) })
        .where('run_id', '=', runId)
        .where('chat_id', '=', chat)
        .execute();
    }
    expect(await h.runJob(runId)).toBe('sent');
    expect((await h.targets(runId)).map((t) => t.status)).toEqual(['sent', 'sent', 'sent']);
    const { items } = await h.sandboxGet<{ items: Msg[] }>(`/sandbox/messages?account=${externalId}`);
    const at = new Map(items.map((m) => [m.chatId, m.receivedAt]));
    expect(at.get('b')).toBeGreaterThanOrEqual(start + 300);
    expect(at.get('c')).toBeGreaterThanOrEqual(start + 600);
    expect((await h.run(runId)).status).toBe('success');
  });

  // One lane, so arrival times on the manual clock are the grant times; parallel lanes are
  // checked against real time in the end-to-end test.
  test('pace: 60/min with burst 1 spaces sends one second apart (plus the margin) on the shared clock', async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount({ maxSendPerMinute: 60, groupConcurrency: 1 });
    const runId = await h.seedRun({ tenantId, accountId, targets: ['a', 'b', 'c', 'd'], parts: [text('x')] });
    await drive(h, runId);
    const { times } = await h.sandboxGet<{ times: number[] }>(`/sandbox/accounts/${externalId}/sends`);
    const sorted = [...times].sort((a, b) => a - b);
    const spacing = Math.ceil(1000 * (1 + PACE_MARGIN));
    expect(sorted.slice(1).map((t, i) => t - sorted[i]!)).toEqual([spacing, spacing, spacing]);
  });
});

describe('waiting in-process for chats not due yet', () => {
  let h: SenderHarness;
  beforeEach(async () => {
    // the default inline wait; one lane at 600/min waits at most that long for a pace slot
    h = await startSenderHarness({ maxInlineWaitMs: 250 });
  });
  afterEach(async () => {
    await h.close();
  });

  test("chats held one after another, as an interval campaign gates them, go in one job: each waited for from the lane's turn", async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount({ maxSendPerMinute: 600, groupConcurrency: 1 });
    const runId = await h.seedRun({ tenantId, accountId, targets: ['a', 'b', 'c', 'd'], parts: [text('x')] });
    // each chat held 200 ms after the one before, as the run before sent them: the last two
    // come due more than the inline wait after the job's start, but within it of their turns
    const start = h.clock.now();
    for (const [chat, ms] of [
      ['b', 200],
      ['c', 400],
      ['d', 600],
    ] as const) {
      await h.tdb.db
        .updateTable('run_targets')
        .set({ next_attempt_at: new Date(start + ms) })
        .where('run_id', '=', runId)
        .where('chat_id', '=', chat)
        .execute();
    }
    expect(await h.runJob(runId)).toBe('sent');
    expect((await h.targets(runId)).map((t) => t.status)).toEqual(['sent', 'sent', 'sent', 'sent']);
    expect((await h.run(runId)).status).toBe('success');
    const { items } = await h.sandboxGet<{ items: Msg[] }>(`/sandbox/messages?account=${externalId}`);
    const at = new Map(items.map((m) => [m.chatId, m.receivedAt]));
    for (const [chat, ms] of [
      ['b', 200],
      ['c', 400],
      ['d', 600],
    ] as const)
      expect(at.get(chat)).toBeGreaterThanOrEqual(start + ms);
  });

  test('a chat due later than a lane waits for a slot is left to a continuation job due when it is', async () => {
    const { tenantId, accountId } = await h.seedAccount({ maxSendPerMinute: 600, groupConcurrency: 1 });
    const runId = await h.seedRun({ tenantId, accountId, targets: ['a', 'b'], parts: [text('x')] });
    const start = h.clock.now();
    await h.tdb.db
      .updateTable('run_targets')
      .set({ next_attempt_at: new Date(start + 1_000) })
      .where('run_id', '=', runId)
      .where('chat_id', '=', 'b')
      .execute();
    expect(await h.runJob(runId)).toBe('sent');
    expect((await h.targets(runId)).map((t) => t.status)).toEqual(['sent', 'pending']);
    const run = await h.run(runId);
    expect(run.status).toBe('running');
    const job = await h.deps.queue.queue.getJob(run.job_id!);
    expect(h.clock.now()).toBeLessThan(start + 1_000);
    expect(job!.opts.delay).toBe(start + 1_000 - h.clock.now());
  });
});

describe('waiting longer for a chat not due yet than for a pace slot (SENDER_MAX_GATE_WAIT_MS)', () => {
  let h: SenderHarness;
  beforeEach(async () => {
    // the defaults: a pace slot is waited for 250 ms, a chat held by its gate 1 s
    h = await startSenderHarness({ maxInlineWaitMs: 250, maxGateWaitMs: 1_000 });
  });
  afterEach(async () => {
    await h.close();
  });

  test('a chat held 800 ms goes in the same job, not before it is due; one held 1.5 s is left to a continuation', async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount({ maxSendPerMinute: 600, groupConcurrency: 1 });
    const runId = await h.seedRun({ tenantId, accountId, targets: ['a', 'b', 'c'], parts: [text('x')] });
    const start = h.clock.now();
    for (const [chat, ms] of [
      ['b', 800],
      ['c', 2_400],
    ] as const) {
      await h.tdb.db
        .updateTable('run_targets')
        .set({ next_attempt_at: new Date(start + ms) })
        .where('run_id', '=', runId)
        .where('chat_id', '=', chat)
        .execute();
    }
    expect(await h.runJob(runId)).toBe('sent');
    expect((await h.targets(runId)).map((t) => t.status)).toEqual(['sent', 'sent', 'pending']);
    const { items } = await h.sandboxGet<{ items: Msg[] }>(`/sandbox/messages?account=${externalId}`);
    expect(items.find((m) => m.chatId === 'b')!.receivedAt).toBeGreaterThanOrEqual(start + 800);
    // c comes due 1.5 s after b's turn: its own job, due when it is
    const run = await h.run(runId);
    const job = await h.deps.queue.queue.getJob(run.job_id!);
    expect(job!.opts.delay).toBe(start + 2_400 - h.clock.now());
  });
});

describe('delivery window', () => {
  let h: SenderHarness;
  beforeEach(async () => {
    // 09:59:55 UTC; the window closes at 10:00
    h = await startSenderHarness({ sendsPerJob: 100, maxInlineWaitMs: 2000 }, Date.parse('2026-06-01T09:59:55Z'));
  });
  afterEach(async () => {
    await h.close();
  });

  test('closes mid-run: paused with the summary, pending kept; resume sends only pending, then pauses again', async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount({ maxSendPerMinute: 60, groupConcurrency: 1 });
    const chats = Array.from({ length: 20 }, (_, i) => `g${String(i).padStart(2, '0')}`);
    const window = { start: '06:00', end: '10:00' };
    const runId = await h.seedRun({ tenantId, accountId, targets: chats, parts: [text('x')], window, windowEndAt: new Date('2026-06-01T10:00:00Z') });
    const outcomes = await drive(h, runId);
    expect(outcomes.at(-1)).toBe('sent');
    const run = await h.run(runId);
    expect(run.status).toBe('paused');
    expect(run.paused_reason).toBe('window_closed');
    // one send a second from 09:59:55 until 10:00: five delivered
    expect(run.error_summary).toBe(
      'Delivery window closed at 10:00 (UTC). 5 of 20 groups delivered, 15 still pending. Resume from the Activity tab. If this happens repeatedly, consider offloading to another paired account, or shrinking the message body / media size to fit more groups in your daily window. Bottleneck: it needed 240/min for 20 chats from 09:59 to 10:00; the account is paced at 60/min.',
    );
    const { times } = await h.sandboxGet<{ times: number[] }>(`/sandbox/accounts/${externalId}/sends`);
    expect(Math.max(...times)).toBeLessThan(Date.parse('2026-06-01T10:00:00Z'));

    // The operator resumes the next morning; the window is recomputed to that day's opening.
    h.clock.set(Date.parse('2026-06-02T09:59:50Z'));
    await h.tdb.db
      .updateTable('runs')
      .set({
        status: 'queued',
        paused_reason: null,
        error_summary: null,
        window_end_at: new Date('2026-06-02T10:00:00Z'),
        job_seq: 5000,
        job_id: `run-${runId}-5000`,
      })
      .where('id', '=', runId)
      .execute();
    await drive(h, runId);
    const again = await h.run(runId);
    expect(again.status).toBe('paused');
    expect(again.error_summary).toContain('15 of 20 groups delivered, 5 still pending');
    const { items } = await h.sandboxGet<{ items: Msg[] }>(`/sandbox/messages?account=${externalId}`);
    expect(items).toHaveLength(15);
    expect(new Set(items.map((m) => m.chatId)).size).toBe(15);
  });

  test('resumed while the window is shut: waits for the next opening instead of sending', async () => {
    const { tenantId, accountId } = await h.seedAccount();
    h.clock.set(Date.parse('2026-06-01T20:00:00Z'));
    const runId = await h.seedRun({
      tenantId,
      accountId,
      targets: ['a'],
      parts: [text('x')],
      window: { start: '06:00', end: '10:00' },
      scheduledAt: new Date('2026-06-01T09:00:00Z'),
      windowEndAt: new Date('2026-06-02T10:00:00Z'),
    });
    expect(await h.runJob(runId)).toBe('deferred');
    const job = await h.deps.queue.queue.getJob((await h.run(runId)).job_id!);
    expect(job!.opts.delay).toBe(Date.parse('2026-06-02T06:00:00Z') - Date.parse('2026-06-01T20:00:00Z'));
  });

  test('a run that reaches its window end before the first send fails and is not resumable', async () => {
    const { tenantId, accountId } = await h.seedAccount();
    const runId = await h.seedRun({ tenantId, accountId, targets: ['a', 'b'], parts: [text('x')], windowEndAt: new Date('2026-06-01T09:59:00Z') });
    expect(await h.runJob(runId)).toBe('window-closed');
    const run = await h.run(runId);
    expect(run.status).toBe('failed');
    expect((await h.targets(runId)).map((t) => t.status)).toEqual(['skipped', 'skipped']);
  });
});

describe('platform answers', () => {
  let h: SenderHarness;
  beforeEach(async () => {
    h = await startSenderHarness({ sendsPerJob: 50, maxRetries: 3 });
  });
  afterEach(async () => {
    await h.close();
  });

  test('flood wait blocks the whole account (persisted) without spending retries', async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount({ groupConcurrency: 1 });
    await h.sandboxPut(`/sandbox/accounts/${externalId}`, { floodWaitSeconds: 30 });
    const runId = await h.seedRun({ tenantId, accountId, targets: ['a', 'b'], parts: [text('x')] });
    const start = h.clock.now();
    const outcomes = await drive(h, runId);
    expect(outcomes[0]).toBe('deferred');
    expect((await h.run(runId)).status).toBe('success');
    const account = await h.tdb.db.selectFrom('accounts').select('blocked_until').where('id', '=', accountId).executeTakeFirstOrThrow();
    expect(account.blocked_until!.getTime()).toBe(start + 30_000);
    const { times } = await h.sandboxGet<{ times: number[] }>(`/sandbox/accounts/${externalId}/sends`);
    expect(Math.min(...times)).toBeGreaterThanOrEqual(start + 30_000);
    expect((await h.targets(runId)).map((t) => t.attempts)).toEqual([1, 1]);
  });

  test('slow mode delays only its chat', async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount({ groupConcurrency: 2 });
    // the chat's first message is fine; a second within 60 s would be refused
    await h.sandboxPut(`/sandbox/chats/${externalId}/slow`, { slowModeSeconds: 60 });
    const runId = await h.seedRun({ tenantId, accountId, targets: ['slow', 'x1', 'x2', 'x3'], parts: [text('one'), text('two')] });
    const start = h.clock.now();
    await drive(h, runId);
    expect((await h.run(runId)).status).toBe('success');
    const { items } = await h.sandboxGet<{ items: Msg[] }>(`/sandbox/messages?account=${externalId}`);
    const slow = items.filter((m) => m.chatId === 'slow');
    const others = items.filter((m) => m.chatId !== 'slow');
    expect(slow.map((m) => m.partIndex)).toEqual([0, 1]);
    expect(slow[1]!.receivedAt - slow[0]!.receivedAt).toBeGreaterThanOrEqual(60_000);
    expect(Math.max(...others.map((m) => m.receivedAt))).toBeLessThan(start + 10_000);
  });

  test('unauthorized: account disconnected, run paused for the account, nothing lost', async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount({ groupConcurrency: 1 });
    await h.sandboxPut(`/sandbox/accounts/${externalId}`, { unauthorized: true });
    const runId = await h.seedRun({ tenantId, accountId, targets: ['a', 'b', 'c'], parts: [text('x')] });
    expect(await h.runJob(runId)).toBe('no-account');
    const run = await h.run(runId);
    expect(run.status).toBe('paused');
    expect(run.paused_reason).toBe('account_unavailable');
    expect((await h.targets(runId)).map((t) => t.status)).toEqual(['pending', 'pending', 'pending']);
    const account = await h.tdb.db.selectFrom('accounts').select('status').where('id', '=', accountId).executeTakeFirstOrThrow();
    expect(account.status).toBe('disconnected');
  });

  test('permanent errors fail the chat with its code; 5xx retries then fails; the run is partial', async () => {
    const { tenantId, accountId, externalId } = await h.seedAccount({ groupConcurrency: 1 });
    await h.sandboxPut(`/sandbox/chats/${externalId}/gone`, { error: 'chat_not_found' });
    await h.sandboxPut(`/sandbox/chats/${externalId}/flaky`, { failNext: 2 });
    await h.sandboxPut(`/sandbox/chats/${externalId}/broken`, { failNext: 10 });
    const runId = await h.seedRun({ tenantId, accountId, targets: ['broken', 'flaky', 'gone', 'ok'], parts: [text('x')] });
    await drive(h, runId);
    expect((await h.run(runId)).status).toBe('partial');
    const t = Object.fromEntries((await h.targets(runId)).map((r) => [r.chat_id, r]));
    expect(t['gone']).toMatchObject({ status: 'failed', error_code: 'chat_not_found', attempts: 1 });
    expect(t['flaky']).toMatchObject({ status: 'sent', attempts: 3 });
    expect(t['broken']).toMatchObject({ status: 'failed', attempts: 3 });
    expect(t['ok']).toMatchObject({ status: 'sent', attempts: 1 });
  });

  test('a timeout after the request was written is unknown and never re-sent', async () => {
    await h.close();
    h = await startSenderHarness({ sendTimeoutMs: 300 });
    const { tenantId, accountId, externalId } = await h.seedAccount({ groupConcurrency: 1 });
    await h.sandboxPut(`/sandbox/chats/${externalId}/hang`, { hangNextMs: 2000 });
    const runId = await h.seedRun({ tenantId, accountId, targets: ['hang', 'ok'], parts: [text('x')] });
    await drive(h, runId);
    const t = Object.fromEntries((await h.targets(runId)).map((r) => [r.chat_id, r]));
    expect(t['hang']).toMatchObject({ status: 'unknown', error_code: 'timeout' });
    expect(t['ok']!.status).toBe('sent');
    expect((await h.run(runId)).status).toBe('partial');
    const { items } = await h.sandboxGet<{ items: Msg[] }>(`/sandbox/messages?account=${externalId}&chat=hang`);
    expect(items).toHaveLength(1);
  });
});

describe('account lock', () => {
  test('a second job for a busy account is re-delayed as lock-busy without touching targets', async () => {
    const h = await startSenderHarness();
    try {
      const { tenantId, accountId } = await h.seedAccount();
      const runId = await h.seedRun({ tenantId, accountId, targets: ['a'], parts: [text('x')] });
      const held = await h.deps.lock.acquire(accountId, 10_000);
      expect(held.held).toBe(true);
      expect(await h.runJob(runId)).toBe('lock-busy');
      expect((await h.targets(runId))[0]).toMatchObject({ status: 'pending', attempts: 0 });
      if (held.held) await h.deps.lock.release(accountId, held.token);
      expect(await h.runJob(runId)).toBe('sent');
    } finally {
      await h.close();
    }
  });
});
