import { DEFAULT_WARMUP_STEPS, effectiveDailyCap, warmupCapToday } from './warmup.js';

const START = new Date('2026-03-01T10:00:00Z');
const at = (days: number, hours = 0) => new Date(START.getTime() + days * 86_400_000 + hours * 3_600_000);
const ramp = { startedAt: START, steps: [...DEFAULT_WARMUP_STEPS] };

describe('warmupCapToday (the default ramp)', () => {
  it.each([
    [-1, 0, 20], // not started yet: the first step
    [0, 0, 20],
    [3, 23, 20],
    [4, 0, 50],
    [7, 23, 50],
    [8, 0, 100],
    [14, 23, 100],
    [15, 0, 200],
    [30, 23, 200],
    [31, 0, null], // over: no warm-up cap
    [400, 0, null],
  ])('day %i + %ih → %p', (days, hours, cap) => {
    expect(warmupCapToday(ramp, at(days, hours))).toBe(cap);
  });

  it('reads steps in any order', () => {
    const steps = [
      { afterDays: 10, dailyCap: 7 },
      { afterDays: 0, dailyCap: 3 },
    ];
    expect(warmupCapToday({ startedAt: START, steps }, at(9))).toBe(3);
    expect(warmupCapToday({ startedAt: START, steps }, at(10))).toBe(7);
  });
});

describe('effectiveDailyCap', () => {
  it.each([
    [null, null, 5, null],
    [80, null, 5, 80],
    [null, ramp, 5, 50],
    [30, ramp, 5, 30],
    [80, ramp, 2, 20],
    [80, ramp, 40, 80],
  ] as const)('dailyCap %p, warm-up %p, day %i → %p', (dailyCap, warmup, day, cap) => {
    expect(effectiveDailyCap(dailyCap, warmup === null ? null : warmup, at(day))).toBe(cap);
  });
});
