import { afterWrite, pacedPerMinute, PACE_MARGIN, waitsInline, writeWaitMs } from './send-pace.js';

test('slots are reserved a margin slower than the configured pace', () => {
  expect(pacedPerMinute(600)).toBeCloseTo(600 / (1 + PACE_MARGIN));
  expect(60_000 / pacedPerMinute(600)).toBeCloseTo(100 * (1 + PACE_MARGIN));
});

test('a late write pushes the next one: writes never bunch up behind it', () => {
  let pace = { tat: 0 };
  expect(writeWaitMs(pace, 1_000, 100, 1)).toBe(0);
  pace = afterWrite(pace, 1_000, 100); // on time
  expect(writeWaitMs(pace, 1_100, 100, 1)).toBe(0);
  pace = afterWrite(pace, 1_180, 100); // 80 ms late
  // the next slot was reserved for 1 200; written then, it would be 20 ms after the late one
  expect(writeWaitMs(pace, 1_200, 100, 1)).toBe(80);
  pace = afterWrite(pace, 1_280, 100);
  expect(pace.tat).toBe(1_380);
});

test('a burst lets that many writes go back to back, then the interval applies', () => {
  let pace = { tat: 0 };
  for (let i = 0; i < 3; i++) {
    expect(writeWaitMs(pace, 5_000, 100, 3)).toBe(0);
    pace = afterWrite(pace, 5_000, 100);
  }
  expect(writeWaitMs(pace, 5_000, 100, 3)).toBe(100);
});

test('a lane waits in-process for a target due no later than it would wait for a pace slot', () => {
  expect(waitsInline(9_000, 10_000, 250)).toBe(true); // already due
  expect(waitsInline(10_250, 10_000, 250)).toBe(true);
  expect(waitsInline(10_251, 10_000, 250)).toBe(false);
  // 3 lanes at 600/min: a slot may be 250 ms plus two intervals away, and so may a due time
  expect(waitsInline(10_450, 10_000, 250 + 2 * 102)).toBe(true);
  expect(waitsInline(10_500, 10_000, 250 + 2 * 102)).toBe(false);
});
