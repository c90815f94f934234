import { DEFAULT_COOLING, ManualClock, type SendResult } from '@metronome/core';
import type { ClaimedTarget, PartWrite, RunForSend, TargetRef, TargetSettlement } from '@metronome/db';
import type { OutgoingMessage } from '@metronome/transports';
import type { JobDeps } from './deps.js';
import { LockLease } from './run-job.js';
import { runLanes } from './send-lanes.js';
import type { JobClaim } from './statements.js';

// One job's lanes on a manual clock, against a PostgreSQL, a pace and a platform that record
// what they are asked. A sender stalled past its account lock's lease (SENDER_HOLD_MS) may no
// longer hold the account: it claims nothing more, and a chat it holds goes back unsent.

const TTL_MS = 3_000;
const START = Date.parse('2026-06-01T09:00:00Z');

interface Stall {
  /** the clock jumps this far while the named statement is out */
  during: 'claim' | 'stamp' | 'typing';
  ms: number;
}

function job(opts: { parts?: number; lanes?: number; typing?: boolean; stall?: Stall; lease?: LockLease } = {}) {
  const clock = new ManualClock(START);
  const claims: JobClaim[] = [];
  const settled: { chatId: string; s: TargetSettlement }[] = [];
  const stamps: string[] = [];
  const sends: string[] = [];
  const typed: string[] = [];
  const due = ['chat-1', 'chat-2'];
  const stallOnce = (what: Stall['during']) => {
    if (opts.stall?.during === what) {
      clock.advance(opts.stall.ms);
      opts.stall = undefined;
    }
  };
  const run = {
    runId: 'run-1',
    trigger: 'schedule',
    parts: Array.from({ length: opts.parts ?? 1 }, (_, i) => ({ type: 'text', text: `part ${i}` })),
    scheduledAt: new Date(START),
    firstSendAt: new Date(START),
    windowEndAt: null,
    dueTimes: due.map(() => START),
    account: {
      id: 'acc-1',
      platform: 'http',
      blockedUntil: null,
      sendDelaySeconds: null,
      hourlyCap: null,
      dailyCap: null,
      warmup: null,
      typing: opts.typing ? { charsPerSecond: 10, maxSeconds: 1 } : null,
      platformDeduplicates: false,
    },
  } as unknown as RunForSend;
  const deps = {
    clock,
    settings: {
      sendsPerJob: 20,
      rateBurst: 1,
      maxRetries: 3,
      sendTimeoutMs: 5_000,
      maxInlineWaitMs: 2_000,
      maxGateWaitMs: 0,
      lockTtlMs: TTL_MS,
      chatPacePerMinute: {},
      partJitterMs: 0,
      cooling: DEFAULT_COOLING,
      answerHoldMs: 0,
    },
    pace: { reserveMany: async (...a: unknown[]) => ({ reserved: true, waitsMs: Array.from({ length: a.at(-1) as number }, () => 0) }) },
    claims: {
      claim: async (sending: boolean, request: JobClaim) => {
        claims.push(request);
        // the statement is out while the job's other lanes come to claim
        await new Promise((r) => setImmediate(r));
        const claimed: ClaimedTarget[] = due.splice(0, request.limit).map((chatId) => ({ chatId, partsSent: 0, attempts: 0 }));
        if (sending && claimed.length > 0) stamps.push(...claimed.map((c) => c.chatId));
        stallOnce('claim');
        return { settled: new Set(request.sent.map((s) => s.chatId)), claimed, firstSend: false, at: clock.now() };
      },
    },
    parts: {
      ask: async (w: PartWrite) => {
        if ('startedAt' in w && w.startedAt) stamps.push(w.target.chatId);
        if ('startedAt' in w) stallOnce('stamp');
        return true;
      },
    },
    targets: {
      settle: async (_run: string, t: TargetRef, _owner: string, s: TargetSettlement) => (settled.push({ chatId: t.chatId, s }), true),
    },
    closes: { ask: async () => ({ settled: new Set<string>(), progress: null, finished: false }) },
    events: { emit: () => undefined },
    draining: new AbortController().signal,
    random: () => 0.5,
    sleep: async (ms: number) => clock.advance(ms),
  } as unknown as JobDeps;
  const transport = {
    send: async (_account: unknown, m: OutgoingMessage): Promise<SendResult> => {
      sends.push(`${m.chatId}/${m.partIndex}`);
      return { kind: 'delivered', messageId: `m-${sends.length}` };
    },
    typingLastsMs: 200,
    showTyping: async (_account: unknown, chatId: string) => {
      typed.push(chatId);
      stallOnce('typing');
    },
  };
  const lease = opts.lease ?? new LockLease(TTL_MS, START);
  const lanes = () =>
    runLanes(
      deps,
      run,
      { id: 'acc-1' } as never,
      transport as never,
      'token-1',
      opts.lanes ?? 1,
      { paceMs: 0, gapMs: 0 },
      { perMinute: 6_000, planHealth: () => ({ kind: 'unchanged' }), lease },
    );
  return { lanes, clock, claims, settled, stamps, sends, typed };
}

/** A chat given back as it was: pending, due at once (`at`: the stall's end), no attempt counted, no error. */
const givenBack = (chatId: string, at: number) => ({
  chatId,
  s: { status: 'pending', nextAttemptAt: new Date(at), countAttempt: false, errorCode: null, errorMessage: null },
});

test('as a control: with its lease held the job claims and sends every chat due', async () => {
  const j = job();
  const report = await j.lanes();
  expect(j.sends).toEqual(['chat-1/0', 'chat-2/0']);
  expect(report.stop).toBeNull();
});

test('a job whose lease has run out claims nothing and sends nothing', async () => {
  const j = job({ lease: new LockLease(TTL_MS, START - TTL_MS) });
  const report = await j.lanes();
  expect(j.claims.filter((c) => c.limit > 0)).toEqual([]);
  expect(j.sends).toEqual([]);
  expect(report.stop).toBe('lock-lost');
});

test('a lane that comes to claim while a claim statement spanning the lease is out claims nothing', async () => {
  const j = job({ lanes: 2, stall: { during: 'claim', ms: TTL_MS } });
  const report = await j.lanes();
  expect(j.claims.filter((c) => c.limit > 0)).toHaveLength(1);
  expect(j.stamps).toEqual(['chat-1']);
  expect(j.sends).toEqual([]);
  expect(report.stop).toBe('lock-lost');
});

test('a chat claimed and stamped as begun, then stalled past the lease before its request, is given back pending without an attempt', async () => {
  const j = job({ stall: { during: 'claim', ms: TTL_MS } });
  const report = await j.lanes();
  expect(j.stamps).toEqual(['chat-1']);
  expect(j.sends).toEqual([]);
  expect(j.settled).toEqual([givenBack('chat-1', j.clock.now())]);
  expect(j.clock.now()).toBe(START + TTL_MS);
  // and no other chat is claimed
  expect(j.claims.filter((c) => c.limit > 0)).toHaveLength(1);
  expect(report.stop).toBe('lock-lost');
  expect(report.attempts).toBe(0);
});

test("a chat's next part stamped, then stalled past the lease before its request, goes back pending with the parts sent before", async () => {
  const j = job({ parts: 2, stall: { during: 'stamp', ms: TTL_MS } });
  const report = await j.lanes();
  expect(j.sends).toEqual(['chat-1/0']);
  expect(j.settled).toEqual([givenBack('chat-1', j.clock.now())]);
  expect(report.stop).toBe('lock-lost');
});

test('typing stops once the lease has run out: the chat goes back, never stamped as begun', async () => {
  const j = job({ typing: true, stall: { during: 'typing', ms: TTL_MS } });
  const report = await j.lanes();
  // shown once (600 ms of typing, renewed every 180 ms): the stall came before its renewal
  expect(j.typed).toEqual(['chat-1']);
  expect(j.stamps).toEqual([]);
  expect(j.sends).toEqual([]);
  expect(j.settled.map((s) => s.chatId)).toEqual(['chat-1']);
  expect(report.stop).toBe('lock-lost');
});
