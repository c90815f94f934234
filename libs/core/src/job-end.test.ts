import { DEFAULT_COOLING } from './cooling.js';
import {
  decideJobEnd,
  decideJobStart,
  failureSummary,
  RESTRICTED_RECHECK_MS,
  windowCloseCauseSentence,
  type JobLaneReport,
  type JobProgress,
  type JobRun,
  type StillPending,
} from './job-end.js';

const NOW = Date.parse('2026-03-02T10:00:00Z');
const MIN = 60_000;
const RETRY = 1_000;
const WINDOW_END = NOW + 60 * MIN; // 11:00 UTC

type Account = JobRun['account'];
const run = (r: Partial<Omit<JobRun, 'account'>> = {}, account: Partial<Account> = {}): JobRun => ({
  scheduledAt: new Date(NOW - MIN),
  windowEndAt: new Date(WINDOW_END),
  timezone: 'UTC',
  windowStart: '09:00',
  windowEnd: '11:00',
  ...r,
  account: { id: 'acc-1', platform: 'telegram', status: 'active', blockedUntil: null, cooling: null, ...account },
});
const progress = (p: Partial<JobProgress> = {}): JobProgress => ({
  total: 10,
  pending: 4,
  inFlight: 0,
  sent: 6,
  failed: 0,
  skipped: 0,
  unknown: 0,
  nextDueAt: null,
  ...p,
});
const report = (r: Partial<JobLaneReport> = {}): JobLaneReport => ({ delivered: 3, stop: null, nextTokenAt: 0, blockedUntil: 0, capUntil: 0, ...r });

describe('decideJobStart', () => {
  it.each<[string, JobRun, unknown]>([
    ['a due run in an open window goes', run(), { kind: 'go' }],
    [
      'a job that fires early waits for the run, even past the window end',
      run({ scheduledAt: new Date(WINDOW_END + MIN) }),
      { kind: 'continue', at: WINDOW_END + MIN, outcome: 'deferred' },
    ],
    ['a run due exactly now goes', run({ scheduledAt: new Date(NOW) }), { kind: 'go' }],
    [
      'a cooling account: the run looks again just after the cooling ends',
      run({}, { status: 'cooling', cooling: { until: new Date(NOW + 10 * MIN), reason: 'flood_waits' } }),
      { kind: 'continue', at: NOW + 10 * MIN + RETRY, outcome: 'deferred' },
    ],
    [
      'a cooling without an end (not delivering, restricted): the run looks again shortly, to go on soon after a lift',
      run({}, { status: 'cooling', cooling: { until: null, reason: 'not_delivering' } }),
      { kind: 'continue', at: NOW + RESTRICTED_RECHECK_MS, outcome: 'deferred' },
    ],
    [
      'a cooling already past its end: the run looks again a moment later',
      run({}, { status: 'cooling', cooling: { until: new Date(NOW - MIN), reason: 'failures' } }),
      { kind: 'continue', at: NOW + RETRY, outcome: 'deferred' },
    ],
    [
      'a cooling that lasts to the window end closes the window, saying why',
      run({}, { status: 'cooling', cooling: { until: new Date(WINDOW_END - RETRY), reason: 'flood_waits' } }),
      { kind: 'close-window', because: { kind: 'cooling', until: WINDOW_END - RETRY, reason: 'flood_waits' }, outcome: 'window-closed' },
    ],
    [
      'cooling with no record of it: "cooling" is the reason',
      run({}, { status: 'cooling', cooling: null }),
      { kind: 'continue', at: NOW + RETRY, outcome: 'deferred' },
    ],
    [
      'cooling with no record and no time left: closes with the plain reason',
      run({ windowEndAt: new Date(NOW + RETRY) }, { status: 'cooling', cooling: null }),
      { kind: 'close-window', because: { kind: 'cooling', until: NOW, reason: 'cooling' }, outcome: 'window-closed' },
    ],
    [
      'cooling in an always-open window waits however long',
      run(
        { windowEndAt: null, windowStart: '00:00', windowEnd: '24:00' },
        { status: 'cooling', cooling: { until: new Date(NOW + 600 * MIN), reason: 'failures' } },
      ),
      { kind: 'continue', at: NOW + 600 * MIN + RETRY, outcome: 'deferred' },
    ],
    ['exactly at the window end the window closes', run({ windowEndAt: new Date(NOW) }), { kind: 'close-window', because: null, outcome: 'window-closed' }],
    ['past the window end the window closes', run({ windowEndAt: new Date(NOW - 1) }), { kind: 'close-window', because: null, outcome: 'window-closed' }],
    [
      'a window not open yet: the run waits for the opening',
      run({ windowStart: '10:30', windowEnd: '11:00' }),
      { kind: 'continue', at: NOW + 30 * MIN, outcome: 'deferred' },
    ],
    ['a window opening exactly now goes', run({ windowStart: '10:00', windowEnd: '11:00' }), { kind: 'go' }],
    [
      'a wait that ends after the window end closes it',
      run({}, { blockedUntil: new Date(WINDOW_END) }),
      { kind: 'close-window', because: null, outcome: 'window-closed' },
    ],
    [
      'a wait that ends inside the window defers to its end',
      run({}, { blockedUntil: new Date(NOW + 5 * MIN) }),
      { kind: 'continue', at: NOW + 5 * MIN, outcome: 'deferred' },
    ],
    ['blocked until exactly now goes', run({}, { blockedUntil: new Date(NOW) }), { kind: 'go' }],
    ['blocked in the past goes', run({}, { blockedUntil: new Date(NOW - MIN) }), { kind: 'go' }],
  ])('%s', (_name, r, expected) => {
    expect(decideJobStart(r, NOW, RETRY)).toEqual(expected);
  });

  it.each(['disabled', 'logged_out', 'banned'])('an account %s pauses the run with advice', (status) => {
    const decision = decideJobStart(run({}, { status }), NOW, RETRY);
    expect(decision).toMatchObject({ kind: 'pause', reason: 'account_unavailable', outcome: 'no-account' });
    expect(decision.kind === 'pause' && decision.summary).toContain('acc-1');
  });

  it('an account that is not active pauses even when the window has closed', () => {
    expect(decideJobStart(run({ windowEndAt: new Date(NOW - MIN) }, { status: 'disabled' }), NOW, RETRY)).toMatchObject({ kind: 'pause' });
  });
});

describe('decideJobEnd', () => {
  const END = NOW;
  const end = (
    p: JobProgress | StillPending,
    rep: JobLaneReport,
    opts: { windowEndAt?: Date | null; cooled?: { until: number; reason: string } | null; at?: number } = {},
  ) =>
    decideJobEnd(p, rep, { windowEndAt: opts.windowEndAt === undefined ? new Date(WINDOW_END) : opts.windowEndAt }, opts.cooled ?? null, opts.at ?? END, RETRY);

  it.each<[string, ReturnType<typeof end>, unknown]>([
    [
      'every target sent: success, no summary',
      end(progress({ pending: 0, sent: 10 }), report()),
      { kind: 'finish', status: 'success', summary: null, outcome: 'sent' },
    ],
    [
      'some sent: partial with a summary',
      end(progress({ pending: 0, sent: 7, failed: 3 }), report()),
      { kind: 'finish', status: 'partial', summary: '7 of 10 groups delivered, 3 failed.', outcome: 'sent' },
    ],
    [
      'none sent, nothing delivered by this job: failed',
      end(progress({ pending: 0, sent: 0, failed: 10 }), report({ delivered: 0 })),
      { kind: 'finish', status: 'failed', summary: '0 of 10 groups delivered, 10 failed.', outcome: 'failed' },
    ],
    [
      'partial, nothing delivered by this job: still sent',
      end(progress({ pending: 0, sent: 7, failed: 3 }), report({ delivered: 0 })),
      { kind: 'finish', status: 'partial', summary: '7 of 10 groups delivered, 3 failed.', outcome: 'sent' },
    ],
    [
      'complete wins over a closed window',
      end(progress({ pending: 0, sent: 10 }), report({ stop: 'window' }), { at: WINDOW_END }),
      { kind: 'finish', status: 'success', summary: null, outcome: 'sent' },
    ],
    ['in flight is not complete', end(progress({ pending: 0, inFlight: 1, sent: 9 }), report()), { kind: 'continue', at: END + RETRY, outcome: 'sent' }],
    [
      'the lanes stopped for the window: it closes, the job delivered',
      end(progress(), report({ stop: 'window' })),
      { kind: 'close-window', because: null, outcome: 'sent' },
    ],
    [
      'the lanes stopped for the window with nothing delivered',
      end(progress(), report({ stop: 'window', delivered: 0 })),
      { kind: 'close-window', because: null, outcome: 'window-closed' },
    ],
    [
      'exactly at the window end: it closes',
      end(progress(), report({ delivered: 0 }), { at: WINDOW_END }),
      { kind: 'close-window', because: null, outcome: 'window-closed' },
    ],
    [
      'a ms before the window end: it continues',
      end(progress(), report({ delivered: 0 }), { at: WINDOW_END - 1 }),
      { kind: 'continue', at: WINDOW_END - 1, outcome: 'deferred' },
    ],
    [
      'pending due later: continue when due',
      end(progress({ nextDueAt: new Date(END + 5 * MIN) }), report()),
      { kind: 'continue', at: END + 5 * MIN, outcome: 'sent' },
    ],
    ['pending already due: continue now', end(progress({ nextDueAt: new Date(END - MIN) }), report()), { kind: 'continue', at: END, outcome: 'sent' }],
    [
      'pending with no due time: continue now',
      end(progress({ nextDueAt: null }), report({ delivered: 0 })),
      { kind: 'continue', at: END, outcome: 'deferred' },
    ],
    [
      'the pace allows the next send later',
      end(progress(), report({ stop: 'pace', nextTokenAt: END + 2_000 })),
      { kind: 'continue', at: END + 2_000, outcome: 'sent' },
    ],
    [
      'a flood wait: continue when it ends',
      end(progress(), report({ stop: 'account-wait', blockedUntil: END + 30_000 })),
      { kind: 'continue', at: END + 30_000, outcome: 'sent' },
    ],
    [
      'the latest of due time, pace and wait wins',
      end(progress({ nextDueAt: new Date(END + 3_000) }), report({ nextTokenAt: END + 4_000, blockedUntil: END + 2_000 })),
      { kind: 'continue', at: END + 4_000, outcome: 'sent' },
    ],
    [
      'draining: continue now, whatever is due later',
      end(progress({ nextDueAt: new Date(END + 5 * MIN) }), report({ stop: 'drain' })),
      { kind: 'continue', at: END, outcome: 'sent' },
    ],
    [
      'draining still waits for the pace',
      end(progress({ nextDueAt: new Date(END + 5 * MIN) }), report({ stop: 'drain', nextTokenAt: END + 1_000 })),
      { kind: 'continue', at: END + 1_000, outcome: 'sent' },
    ],
    [
      'a next send after the window end: it closes, even when the job delivered',
      end(progress({ nextDueAt: new Date(WINDOW_END) }), report()),
      { kind: 'close-window', because: null, outcome: 'window-closed' },
    ],
    [
      'an always-open window never closes',
      end(progress({ nextDueAt: new Date(WINDOW_END + 600 * MIN) }), report(), { windowEndAt: null }),
      { kind: 'continue', at: WINDOW_END + 600 * MIN, outcome: 'sent' },
    ],
    [
      'a cooling begun by this job: continue when it ends',
      end(progress(), report(), { cooled: { until: END + 10 * MIN, reason: 'flood_waits' } }),
      { kind: 'continue', at: END + 10 * MIN, outcome: 'sent' },
    ],
    [
      'a cooling that lasts to the window end: close, saying why',
      end(progress(), report(), { cooled: { until: WINDOW_END, reason: 'failures' } }),
      { kind: 'close-window', because: { kind: 'cooling', until: WINDOW_END, reason: 'failures' }, outcome: 'sent' },
    ],
    [
      'a cooling in an always-open window waits',
      end(progress(), report(), { windowEndAt: null, cooled: { until: WINDOW_END, reason: 'failures' } }),
      { kind: 'continue', at: WINDOW_END, outcome: 'sent' },
    ],
    [
      'a cap that frees inside the window: continue (the lanes wait for the slot)',
      end(progress(), report({ capUntil: WINDOW_END - 1 })),
      { kind: 'continue', at: END, outcome: 'sent' },
    ],
    [
      'a cap that frees exactly at the window end: close, saying why',
      end(progress(), report({ capUntil: WINDOW_END, delivered: 0 })),
      { kind: 'close-window', because: { kind: 'cap', until: WINDOW_END }, outcome: 'window-closed' },
    ],
    [
      'a cap in an always-open window: continue',
      end(progress(), report({ capUntil: WINDOW_END + MIN }), { windowEndAt: null }),
      { kind: 'continue', at: END, outcome: 'sent' },
    ],
    // still pending: the statement did not count the run (StillPending), only when the next is due
    [
      'still pending, due later: continue when due',
      end({ stillPending: true, nextDueAt: new Date(END + 5 * MIN) }, report()),
      { kind: 'continue', at: END + 5 * MIN, outcome: 'sent' },
    ],
    [
      'still pending, already due: continue now, never finish',
      end({ stillPending: true, nextDueAt: new Date(END - MIN) }, report({ delivered: 0 })),
      { kind: 'continue', at: END, outcome: 'deferred' },
    ],
    [
      'still pending, the lanes stopped for the window: it closes',
      end({ stillPending: true, nextDueAt: new Date(END) }, report({ stop: 'window' })),
      { kind: 'close-window', because: null, outcome: 'sent' },
    ],
    [
      'still pending, due after the window end: it closes',
      end({ stillPending: true, nextDueAt: new Date(WINDOW_END) }, report()),
      { kind: 'close-window', because: null, outcome: 'window-closed' },
    ],
    [
      'still pending, draining: continue now',
      end({ stillPending: true, nextDueAt: new Date(END + 5 * MIN) }, report({ stop: 'drain' })),
      { kind: 'continue', at: END, outcome: 'sent' },
    ],
    [
      'cooling is named before the cap',
      end(progress(), report({ capUntil: WINDOW_END }), { cooled: { until: WINDOW_END, reason: 'flood_waits' } }),
      { kind: 'close-window', because: { kind: 'cooling', until: WINDOW_END, reason: 'flood_waits' }, outcome: 'sent' },
    ],
  ])('%s', (_name, decision, expected) => {
    expect(decision).toEqual(expected);
  });
});

describe('the words of a decision', () => {
  it('names the cooling and the time it ends, in the run timezone', () => {
    expect(
      windowCloseCauseSentence({ kind: 'cooling', until: Date.parse('2026-03-02T12:30:00Z'), reason: 'flood_waits' }, 'Europe/Berlin', DEFAULT_COOLING),
    ).toBe('The account is cooling until 13:30 (Europe/Berlin): the platform made it wait more than 3 times in an hour, after the delivery window closes.');
  });

  it('names the cap and when it frees a slot', () => {
    expect(windowCloseCauseSentence({ kind: 'cap', until: Date.parse('2026-03-02T12:30:00Z') }, 'UTC', DEFAULT_COOLING)).toBe(
      "The account's hourly or daily cap is met until 12:30 (UTC), after the delivery window closes.",
    );
  });

  it('a failure summary names every kind of miss', () => {
    expect(failureSummary({ total: 10, pending: 0, inFlight: 0, sent: 5, failed: 2, unknown: 2, skipped: 1 })).toBe(
      '5 of 10 groups delivered, 2 failed, 2 unknown (may or may not have arrived; retry-failed re-sends them), 1 skipped.',
    );
  });
});
