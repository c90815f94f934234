import { ManualClock } from '@metronome/core';
import { RateLimiter } from './rate-limiter.js';

describe('RateLimiter', () => {
  test('allows a minute’s allowance at once, then one request per 60/limit seconds', () => {
    const clock = new ManualClock(0);
    const limiter = new RateLimiter(6, clock);
    expect(Array.from({ length: 6 }, () => limiter.take('t'))).toEqual([0, 0, 0, 0, 0, 0]);
    expect(limiter.take('t')).toBe(10_000);
    clock.advance(9_999);
    expect(limiter.take('t')).toBe(1);
    clock.advance(1);
    expect(limiter.take('t')).toBe(0);
    expect(limiter.take('t')).toBe(10_000);
  });

  test('never more than limit + elapsed·rate across any window boundary (unlike a fixed window)', () => {
    const clock = new ManualClock(0);
    const limiter = new RateLimiter(60, clock);
    let granted = 0;
    // Hammer it every 100 ms for two minutes: a fixed window would allow 120 around the edge.
    for (let t = 0; t <= 120_000; t += 100) {
      clock.set(t);
      while (limiter.take('t') === 0) granted++;
    }
    expect(granted).toBe(60 + 120);
  });

  test('keys are independent, and refusals do not spend the allowance', () => {
    const clock = new ManualClock(0);
    const limiter = new RateLimiter(1, clock);
    expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBe(60_000);
    expect(limiter.take('a')).toBe(60_000);
    expect(limiter.take('b')).toBe(0);
    clock.advance(60_000);
    expect(limiter.take('a')).toBe(0);
  });

  test('forgets keys whose allowance is full again once it tracks too many', () => {
    const clock = new ManualClock(0);
    const limiter = new RateLimiter(60, clock, 2);
    limiter.take('a');
    limiter.take('b');
    clock.advance(1_000); // a and b are full again
    limiter.take('c'); // prunes a and b
    expect((limiter as unknown as { tat: Map<string, number> }).tat.size).toBe(1);
  });
});
