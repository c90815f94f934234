import fc from 'fast-check';
import { checkPace, freshPace, maxInWindow, slowModeWaitMs, toRetryAfterSeconds } from './limits.js';
import type { PaceState } from './limits.js';

describe('checkPace', () => {
  const accept = (pace: PaceState, now: number, max: number, burst = 1): PaceState => {
    const r = checkPace(pace, now, max, burst);
    if (!r.ok) throw new Error(`send at ${now} rejected`);
    return r.next;
  };

  it('allows anything when the pace is 0 (unlimited)', () => {
    expect(checkPace({ tokens: 0, at: 1_000 }, 1_000, 0, 1).ok).toBe(true);
  });

  it('with burst 1, requires 60000/max ms since the previous accepted send', () => {
    const after = accept(freshPace(), 10_000, 60);
    expect(checkPace(after, 10_999, 60, 1)).toEqual({ ok: false, waitMs: expect.closeTo(1, 6) });
    expect(checkPace(after, 11_000, 60, 1).ok).toBe(true);
  });

  it('lets `burst` sends through back to back, then paces', () => {
    let pace = freshPace();
    for (let i = 0; i < 3; i++) pace = accept(pace, 5_000, 60, 3);
    expect(checkPace(pace, 5_000, 60, 3)).toEqual({ ok: false, waitMs: 1_000 });
    expect(checkPace(pace, 6_000, 60, 3).ok).toBe(true);
  });

  it('applies a new pace from the next send, measured from the previous accepted one', () => {
    const fast = accept(accept(freshPace(), 0, 600), 100, 600);
    expect(checkPace(fast, 200, 60, 1)).toEqual({ ok: false, waitMs: expect.closeTo(900, 6) });
    expect(checkPace(fast, 1_100, 60, 1).ok).toBe(true);
    const unlimited = accept(freshPace(), 500, 0);
    expect(checkPace(unlimited, 1_000, 60, 1).ok).toBe(false);
    expect(checkPace(unlimited, 1_500, 60, 1).ok).toBe(true);
  });

  it('never accepts more than burst + window/interval sends in any window', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.integer({ min: 0, max: 3_000 }), { maxLength: 80 }),
        (max, burst, gaps) => {
          let now = 0;
          let pace = freshPace();
          const accepted: number[] = [];
          for (const gap of gaps) {
            now += gap;
            const r = checkPace(pace, now, max, burst);
            if (r.ok) {
              pace = r.next;
              accepted.push(now);
            } else {
              expect(r.waitMs).toBeGreaterThan(0);
              // Waiting exactly the answer is enough.
              expect(checkPace(pace, now + r.waitMs, max, burst).ok).toBe(true);
            }
          }
          const interval = 60_000 / max;
          for (const windowMs of [1_000, 10_000, 60_000]) {
            expect(maxInWindow(accepted, windowMs)).toBeLessThanOrEqual(burst + Math.ceil(windowMs / interval));
          }
          if (burst === 1) {
            for (let i = 1; i < accepted.length; i++) {
              expect((accepted[i] as number) - (accepted[i - 1] as number)).toBeGreaterThanOrEqual(interval - 1e-6);
            }
          }
        },
      ),
    );
  });
});

describe('slowModeWaitMs', () => {
  it('is 0 when off or when the chat has received nothing', () => {
    expect(slowModeWaitMs(1_000, 1_500, 0)).toBe(0);
    expect(slowModeWaitMs(null, 1_500, 10)).toBe(0);
  });

  it('is the rest of the spacing since the last accepted message', () => {
    expect(slowModeWaitMs(1_000, 4_000, 10)).toBe(7_000);
    expect(slowModeWaitMs(1_000, 11_000, 10)).toBe(0);
  });
});

describe('toRetryAfterSeconds', () => {
  it('rounds up and never answers 0 for a positive wait', () => {
    expect(toRetryAfterSeconds(1)).toBe(1);
    expect(toRetryAfterSeconds(1_000)).toBe(1);
    expect(toRetryAfterSeconds(1_001)).toBe(2);
    expect(toRetryAfterSeconds(2_000.0000000000002)).toBe(2);
  });
});

describe('maxInWindow', () => {
  it('counts the most timestamps in any half-open window', () => {
    expect(maxInWindow([], 1_000)).toBe(0);
    expect(maxInWindow([0, 999, 1_000, 1_500, 1_998], 1_000)).toBe(4);
    expect(maxInWindow([0, 999, 1_000, 1_500, 1_999], 1_000)).toBe(3);
    expect(maxInWindow([0, 1_000, 2_000], 1_000)).toBe(1);
  });

  it('does not depend on the order of the input', () => {
    expect(maxInWindow([1_998, 0, 1_500, 1_000, 999], 1_000)).toBe(4);
  });
});
