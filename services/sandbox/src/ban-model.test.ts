import { banBreach, NO_BAN } from './ban-model.js';

const HOUR = 3_600_000;

describe('banBreach', () => {
  it('breaks nothing while every rule is off', () => {
    expect(banBreach([0, 1, 2, 3], 3, NO_BAN)).toBeNull();
  });

  it('bans a send closer than the minimum gap, and allows one exactly at it', () => {
    const rules = { ...NO_BAN, banMinGapMs: 1_000 };
    expect(banBreach([5_000], 5_999, rules)).toMatch(/999 ms after the previous send/);
    expect(banBreach([5_000], 6_000, rules)).toBeNull();
    expect(banBreach([], 0, rules)).toBeNull();
  });

  it('counts the hourly cap over a rolling hour', () => {
    const rules = { ...NO_BAN, banHourlyCap: 3 };
    const times = [0, 10, 20];
    expect(banBreach(times, 30, rules)).toMatch(/beyond 3 in one hour/);
    // the first send leaves the window exactly one hour after it
    expect(banBreach(times, HOUR - 1, rules)).not.toBeNull();
    expect(banBreach(times, HOUR, rules)).toBeNull();
    expect(banBreach([0, 10], 30, rules)).toBeNull();
  });

  it('counts the daily cap over a rolling 24 hours', () => {
    const rules = { ...NO_BAN, banDailyCap: 2 };
    expect(banBreach([0, 5 * HOUR], 20 * HOUR, rules)).toMatch(/beyond 2 in 24 hours/);
    expect(banBreach([0, 5 * HOUR], 24 * HOUR, rules)).toBeNull();
  });
});
