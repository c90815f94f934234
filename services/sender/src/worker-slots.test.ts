import { SLOTS_PER_WORKER, workerSlots } from './worker-slots.js';

describe('workerSlots', () => {
  it('keeps a concurrency of one worker or less in one worker', () => {
    expect(workerSlots(1)).toEqual([1]);
    expect(workerSlots(SLOTS_PER_WORKER)).toEqual([SLOTS_PER_WORKER]);
  });

  it('splits the default 128 between four workers of 32', () => {
    expect(workerSlots(128)).toEqual([32, 32, 32, 32]);
  });

  it('splits evenly, never over SLOTS_PER_WORKER, and always adds up to the concurrency', () => {
    for (const c of [2, 31, 33, 50, 64, 100, 129, 1000]) {
      const slots = workerSlots(c);
      expect(slots.reduce((a, b) => a + b, 0)).toBe(c);
      expect(Math.max(...slots)).toBeLessThanOrEqual(SLOTS_PER_WORKER);
      expect(Math.max(...slots) - Math.min(...slots)).toBeLessThanOrEqual(1);
      expect(slots).toHaveLength(Math.ceil(c / SLOTS_PER_WORKER));
    }
    expect(workerSlots(33)).toEqual([17, 16]);
  });

  it('refuses a concurrency that is not a whole number of at least 1', () => {
    expect(() => workerSlots(0)).toThrow('concurrency');
    expect(() => workerSlots(2.5)).toThrow('concurrency');
  });
});
