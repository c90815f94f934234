import { defaultSendDelay, drawSendDelayMs, sendLimits } from './send-safety.js';

/** A seeded source (mulberry32), as the sender could be given. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('drawSendDelayMs', () => {
  it('spans the whole range: never below min, never above max, and neither always min nor a fixed value', () => {
    const random = seeded(7);
    const draws = Array.from({ length: 1_000 }, () => drawSendDelayMs({ min: 30, max: 60 }, random));
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(30_000);
    expect(Math.max(...draws)).toBeLessThanOrEqual(60_000);
    // uniform: about a third of the draws in each third of the range
    const low = draws.filter((d) => d < 40_000).length;
    const high = draws.filter((d) => d >= 50_000).length;
    expect(low).toBeGreaterThan(250);
    expect(high).toBeGreaterThan(250);
    expect(new Set(draws).size).toBeGreaterThan(900);
  });

  it('follows the random source it is given', () => {
    expect(drawSendDelayMs({ min: 1, max: 2 }, () => 0)).toBe(1_000);
    expect(drawSendDelayMs({ min: 1, max: 2 }, () => 0.5)).toBe(1_500);
    expect(drawSendDelayMs({ min: 1, max: 2 }, () => 0.999_999)).toBe(1_999);
    expect(drawSendDelayMs({ min: 3, max: 3 }, () => 0.7)).toBe(3_000);
  });
});

describe('defaults and limits', () => {
  it('gives new WhatsApp accounts 30–60 s, others nothing', () => {
    expect(defaultSendDelay('whatsapp')).toEqual({ min: 30, max: 60 });
    expect(defaultSendDelay('telegram')).toBeNull();
    expect(defaultSendDelay('http')).toBeNull();
  });

  it('is null for an account with none of the settings (its sends stay on the plain pace)', () => {
    expect(sendLimits({ sendDelay: null, hourlyCap: null, dailyCap: null })).toBeNull();
    expect(sendLimits({ sendDelay: { min: 1, max: 2 }, hourlyCap: null, dailyCap: 9 })).toEqual({
      minDelayMs: 1_000,
      delay: { min: 1, max: 2 },
      hourlyCap: 0,
      dailyCap: 9,
    });
  });
});
